"""The project's benchmarks, run from the repository's root as modules:
``.venv/bin/python -m bench.bench_kb`` (or ``make bench-kb``; ``make bench`` runs them all
through :mod:`bench.run_all`). A benchmark imports ``agent_search`` and its siblings here
as a package, nothing from ``tests``; what the tests and the benchmarks both build (office
documents, the hostile PDF) lives in :mod:`bench.documents`. A benchmark that measures
another git ref runs itself again with ``python -m`` and that ref's package first on
``PYTHONPATH``."""
