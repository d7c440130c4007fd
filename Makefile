# agent-search — the two commands are `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export AGENT_SEARCH_HOME ?= $(CURDIR)/.agent_search

.PHONY: install demo test test-slow lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
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

clean:
	rm -rf $(VENV) .agent_search .mypy_cache .ruff_cache .pytest_cache
