"""``db.match_by_meaning`` through the handler, on Chinook: a leftover word read as the
field it means ("duration" → ``Milliseconds``) with the real offline model; on by
default (issue 31 item 2), and switched off the word stays unread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db import create_handler
from agent_search.types import Request

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_phrase_is_read_by_meaning_unless_switched_off(
        chinook_sqlite_master: Path, tmp_path: Path) -> None:
    orders = {}
    for on in (False, True):
        config = SearchConfig(home=tmp_path / "home",
                              db={"url": f"sqlite:///{chinook_sqlite_master}",
                                  **({} if on else {"match_by_meaning": False})})
        handler = create_handler(config)
        try:
            r = await handler.search(Context(config=config), Request(
                type="db", query="tracks ordered by duration", limit=5))
        finally:
            await handler.aclose()
        assert r.error is None
        assert r.dsl is not None
        meant = [w for w in r.warnings if "by meaning" in w]
        assert bool(meant) is on, r.warnings
        if not on:  # an order asked with nothing to order by: silent, saying why
            assert r.dsl["queries"] == [] and r.items == []
            assert any("asks for an order" in w for w in r.warnings), r.warnings
            continue
        orders[on] = r.dsl["queries"][0]["orders"]
    assert orders[True] == [{"field": "Milliseconds", "order": "asc"}]
    lengths = [i.data["Milliseconds"] for i in r.items]
    assert lengths == sorted(lengths) and len(lengths) == 5


def test_a_process_that_ends_while_the_model_loads_exits_cleanly(tmp_path: Path) -> None:
    """The model loads in a background thread from the first search; a short process (a
    CLI question) that ends before it finished must wait for it, not abort inside
    onnxruntime ("terminate called without an active exception", exit 134)."""
    code = (
        "import anyio, sqlite3, sys\n"
        "from agent_search.config import SearchConfig\n"
        "from agent_search.context import Context\n"
        "from agent_search.db import create_handler\n"
        "from agent_search.types import Request\n"
        "db = sys.argv[1] + '/t.db'\n"
        "with sqlite3.connect(db) as c:\n"
        "    c.execute('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)')\n"
        "    c.execute(\"INSERT INTO items VALUES (1, 'a')\")\n"
        "async def main():\n"
        "    cfg = SearchConfig(home=sys.argv[1] + '/home', db={'url': 'sqlite:///' + db})\n"
        "    h = create_handler(cfg)\n"
        "    r = await h.search(Context(config=cfg), Request(type='db', query='items'))\n"
        "    assert r.error is None, r.error\n"
        "    await h.aclose()\n"
        "anyio.run(main)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "terminate called" not in done.stderr
