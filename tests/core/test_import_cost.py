"""What a command loads (issue 31 item 3): ``import agent_search``, ``agent-search --help``
and ``Searcher.from_config`` load none of the heavy libraries (the embedding runtime, the
stores, SQLAlchemy, the Chinese segmenter, the pluraliser, the web clients): each is
imported where it is used, on the first search that needs it. Checked on ``sys.modules``
of a fresh interpreter, no timing (``make bench-startup`` measures the time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HEAVY = ("onnxruntime", "fastembed", "qdrant_client", "qdrant_edge", "sqlalchemy", "jieba",
         "inflect", "numpy", "httpx", "tavily", "tokenizers", "mcp", "networkx", "pypdf",
         "trafilatura", "opencc", "rapidfuzz", "fastapi", "uvicorn")
"""Libraries no start-up path below may load."""

REPORT = (
    "import json, sys\n"
    "heavy = {heavy!r}\n"
    "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n")


def _loaded(code: str, tmp_path: Path) -> list[str]:
    """The HEAVY modules loaded after running ``code`` in a fresh interpreter, with an
    empty data home and no project configuration around it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_SEARCH_")}
    env["AGENT_SEARCH_HOME"] = str(tmp_path / "home")
    script = code + "\n" + REPORT.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_import_agent_search_loads_nothing_heavy(tmp_path: Path) -> None:
    code = "import agent_search\nassert 'pydantic' not in sys.modules, 'pydantic'"
    assert _loaded("import sys\n" + code, tmp_path) == []


def test_public_names_still_import_from_the_root(tmp_path: Path) -> None:
    """The lazy root: ``from agent_search import ...`` and attribute access work, and
    ``dir()`` lists the public names."""
    code = ("import agent_search\n"
            "from agent_search import Request, Searcher, SearchConfig, span\n"
            "assert agent_search.Result.__name__ == 'Result'\n"
            "assert set(agent_search.__all__) <= set(dir(agent_search))\n"
            "try:\n    agent_search.nope\nexcept AttributeError:\n    pass\n"
            "else:\n    raise SystemExit('no AttributeError')\n")
    assert _loaded(code, tmp_path) == []


def test_help_loads_nothing_heavy(tmp_path: Path) -> None:
    code = ("import contextlib, io, sys\n"
            "from agent_search.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n        main(['--help'])\n    except SystemExit as e:\n"
            "        assert e.code == 0, e.code\n"
            "assert 'search' in out.getvalue()\n")
    assert _loaded(code, tmp_path) == []


@pytest.mark.parametrize("command", ["search", "ask", "kb", "eval", "mcp", "serve"])
def test_a_command_help_loads_nothing_heavy(tmp_path: Path, command: str) -> None:
    code = ("import contextlib, io, sys\n"
            "from agent_search.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main([{command!r}, '--help'])\n    except SystemExit as e:\n"
            "        assert e.code == 0, e.code\n")
    assert _loaded(code, tmp_path) == []


def test_searcher_from_config_loads_nothing_heavy(tmp_path: Path) -> None:
    """Every builtin handler is built (web, kb, db), none of their libraries loaded."""
    code = ("from agent_search import Searcher\n"
            "s = Searcher.from_config()\n"
            "assert s.registry.types[:3] == ['web', 'kb', 'db'], s.registry.types\n")
    assert _loaded(code, tmp_path) == []


def test_the_server_key_ring_and_settings_load_no_web_framework(tmp_path: Path) -> None:
    """``agent-search serve`` checks the API keys, and a configuration with a ``server``
    section validates it, before any app exists: neither loads FastAPI."""
    code = ("from agent_search.server import KeyRing, ServerSettings\n"
            "KeyRing(ServerSettings())\n")
    assert _loaded(code, tmp_path) == []


@pytest.fixture(scope="module")
def notes_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data home with the offline model and a two-note collection ``notes``, searched
    once here (the first search in a home embeds and analyses the background passages),
    then closed (one process at a time opens an embedded store)."""
    import anyio

    from agent_search import Request, SearchConfig, Searcher
    from agent_search.kb import Access, close_stores
    from tests.support.kb import ingested_home

    for home in ingested_home(tmp_path_factory, "notes", "notes", {
            "bees.md": ("# Bees\n\nHoney bees tell each other the direction of food with a "
                        "waggle dance in the hive.\n", Access()),
            "tea.md": ("# Tea\n\nGreen tea is brewed at about 80 degrees Celsius.\n",
                       Access())}):
        (home / "config").mkdir()
        (home / "config" / "search.yao").write_text('{"options": {"timeout": 300}}')
        searcher = Searcher(SearchConfig(home=home, options={"timeout": 300}))
        from agent_search.kb import create_handler

        searcher.registry.register(create_handler(searcher.config))
        result = anyio.run(searcher.search, Request(type="kb", query="bees",
                                                   collections=["notes"]))
        assert result.error is None, result.error
        close_stores()
        yield home


def test_a_kb_search_in_english_loads_only_what_it_uses(notes_home: Path,
                                                        tmp_path: Path) -> None:
    """``agent-search search kb`` on an English question: the embedding runtime and the
    store, not SQLAlchemy, the pluraliser, the web clients, nor jieba (its dictionary is
    ~1 s of CPU; the background passages' Chinese terms are read from the data home,
    where the first search there saved them)."""
    code = ("import contextlib, io, json, os, sys\n"
            f"os.environ['AGENT_SEARCH_HOME'] = {str(notes_home)!r}\n"
            "from agent_search.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n"
            "        main(['search', 'kb', 'how do bees tell each other where food is',\n"
            f"              '-c', 'notes', '--json', '--min-score', '0',\n"
            f"              '--config', {str(notes_home / 'config')!r}])\n"
            "    except SystemExit as e:\n"
            "        assert e.code == 0, out.getvalue()\n"
            "items = json.loads(out.getvalue())['items']\n"
            "assert items[0]['title'] == 'Bees', items\n")
    assert _loaded(code, tmp_path) == ["numpy", "onnxruntime", "qdrant_edge", "tokenizers"]
