"""The model shared by the web app and the HTTP API: one Engine, swappable, loaded lazily."""

from __future__ import annotations

import os
import threading

from explorer.engine import DEFAULT_MODEL, Engine


class ModelHolder:
    """Holds the current Engine; `get()` loads the configured model on first use."""

    def __init__(self, model: str | None = None, device: str | None = None, dtype: str | None = None,
                 trust_remote_code: bool = False):
        self.model_id = model or os.environ.get("EXPLORER_MODEL") or DEFAULT_MODEL
        self.device = device or os.environ.get("EXPLORER_DEVICE")
        self.dtype = dtype or os.environ.get("EXPLORER_DTYPE")
        self.trust_remote_code = trust_remote_code
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> Engine | None:
        """The current Engine if one is loaded (never loads)."""
        return self._engine

    def get(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = Engine.load(self.model_id, self.device, self.dtype, self.trust_remote_code)
            return self._engine

    def switch(self, model_id: str) -> Engine:
        """Load `model_id` and make it current; on failure the old model stays (the error propagates)."""
        model_id = (model_id or "").strip() or DEFAULT_MODEL
        with self._lock:
            if self._engine is not None and self._engine.name == model_id:
                return self._engine
            engine = Engine.load(model_id, self.device, self.dtype, trust_remote_code=False)
            self._engine, self.model_id = engine, model_id
            return engine

    def set(self, engine: Engine) -> None:
        with self._lock:
            self._engine, self.model_id = engine, engine.name
