# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch is pinned to the CPU build through constraints.txt: a bare `torch` pulls a CUDA build.
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: demo test test-python test-editor test-fast test-gpu lint format bench clean neovim extension e2e

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamp files record what is installed, so repeated runs skip the installer.
# pip compiles the bytecode of what it installs, but not of an editable install's source; with
# PYTHONDONTWRITEBYTECODE set (as on CI machines) every start would compile torchlint's hundred
# modules again (about 0.1 s of CPU), so compile them once here. Python still checks each file's mtime.
$(VENV)/.installed-runtime: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".[runtime]"
	$(BIN)/python -m compileall -q torchlint
	touch $@

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".[runtime,dev]"
	$(BIN)/python -m compileall -q torchlint
	touch $@ $(VENV)/.installed-runtime

# torchlint exits 1 when it finds something, and the examples are meant to have findings:
# accept 0 and 1, fail on 2 (a usage, configuration or internal error). The runtime check
# fails on purpose too: housing_regression.py never clears its gradients.
demo: $(VENV)/.installed-runtime
	@$(BIN)/torchlint check examples/; status=$$?; [ $$status -le 1 ]
	@echo; echo "runtime check (runs the script in a child process): torchlint run overfit examples/housing_regression.py"
	@$(BIN)/torchlint run overfit examples/housing_regression.py --steps 100 --timeout 120; status=$$?; [ $$status -le 1 ]

# Two phases side by side once the environment is installed: the Python suite (CPU-bound, on
# every core) and the editor's (downloads, the extension's build and tests, the real VS Code,
# much of it waiting on the network or on a browser). Each prints its output when it ends; make
# fails if either does.
test: $(VENV)/.installed-dev neovim
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-python test-editor

test-python: $(VENV)/.installed-dev neovim
	$(BIN)/python -m pytest -n auto -q

test-editor: e2e

# The inner loop: everything in-process (rules, engine, fixes, project, CLI, docs), about two
# minutes on two cores; leaves out the language server over stdio, the runtime's child
# processes, Neovim, the extension and the real VS Code, which `make test` runs.
test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n auto -q --ignore=tests/lsp --ignore=tests/runtime --ignore=tests/gpu

# The CUDA suite (tests/gpu), on a machine with a GPU; never part of `make test`. It needs a
# Python whose torch sees CUDA (GPU_PYTHON, default python3: the CPU build of .venv cannot), with
# libcst (the static findings a run confirms); torchlint itself is imported from this tree.
# TORCHLINT_GPU_FIGURES names a JSON file for the figures it measured (benchmarks/README.md).
GPU_PYTHON ?= python3
test-gpu:
	TORCHLINT_GPU=1 PYTHONPATH=$(CURDIR) $(GPU_PYTHON) -m pytest tests/gpu -q \
		--confcutdir=tests/gpu -p no:cacheprovider -o addopts="-ra --strict-markers"

# The VS Code extension: install (from package-lock.json), typecheck, lint, unit tests (the
# ones that start the real language server use this repository's Python), the universal .vsix
# and the one for this platform, which carries torchlint and its dependencies (scripts/package.py).
EXTENSION := vscode-extension
EXTENSION_VERSION = $$(node -p "require('./$(EXTENSION)/package.json').version")
PLATFORM = $$(node -p "process.platform + '-' + process.arch")
extension: $(VENV)/.installed-dev
	cd $(EXTENSION) && npm ci --no-audit --no-fund --loglevel=error
	cd $(EXTENSION) && npm run --silent typecheck && npm run --silent lint
	cd $(EXTENSION) && TORCHLINT_TEST_PYTHON=$(abspath $(BIN))/python npm test --silent
	cd $(EXTENSION) && npm run --silent package
	$(BIN)/python $(EXTENSION)/scripts/package.py --quiet --target $(PLATFORM)

# The end-to-end test in a real VS Code: code-server from npm and Debian's Chromium, set up
# (and cached under vscode-extension/.e2e-cache/) by the script, driven by playwright-core, on
# the platform's .vsix (its bundled torchlint is one of the phases).
e2e: extension
	$(EXTENSION)/scripts/e2e-setup.sh
	TORCHLINT_PYTHON=$(abspath $(BIN))/python node $(EXTENSION)/e2e/run.mjs \
		$(EXTENSION)/torchlint-$(PLATFORM)-$(EXTENSION_VERSION).vsix

# Neovim is the language server's second, independent test client. Install Debian's package
# when we can (root, apt); elsewhere its one test is skipped (CI always has it).
neovim:
	@command -v nvim >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update -qq && apt-get install -y -qq neovim >/dev/null) \
		|| echo "note: Neovim not installed; its language-server test will be skipped"; }

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(VENV)/.installed-runtime
	$(BIN)/python benchmarks/bench_check.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .torchlint_cache
