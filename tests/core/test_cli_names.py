"""A mistyped name on the command line gets the name it is likely a typo of, from the
one rule (``agent_search.errors.closest``): a collection (``search kb``, ``ask``), an
assistant (``--assistant``); and a command's argument is named the same in its error
line, its help and docs/cli.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search.cli import main
from agent_search.errors import closest, did_you_mean
from agent_search.kb import Access, close_stores
from agent_search.kb._store import BASE_INDEXES, PointData, SparseVec, edge_root, point_id
from agent_search.kb._store._edge import EdgeStore

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_the_one_rule() -> None:
    assert closest("doc", ["docs", "notes"]) == "docs"
    assert closest("DOCS", ["docs"]) == "docs"  # case only
    assert closest("wbe", ["web", "kb", "db"]) == "web"
    assert closest("zzz", ["web", "kb", "db"]) is None
    assert did_you_mean("ofline", ["offline"]) == " — did you mean 'offline'?"
    assert did_you_mean("zzz", ["offline"]) == ""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data home with 'notes' (public chunks) and 'secrets' (one user's own)."""
    home = tmp_path / "home"
    store = EdgeStore(edge_root(home))
    for name, access in (("notes", Access.of()), ("secrets", Access.of("alice"))):
        store.create(name, 3, {"dimensions": 3}, BASE_INDEXES)
        store.upsert(name, [PointData(point_id(name, "n.md", "doc", 0, kind="u64"),
                                      [1.0, 0.0, 0.0], SparseVec([1], [1.0]),
                                      {"source": "n.md", "document_id": "doc",
                                       "chunk_index": 0, **access.payload()})])
    store.close()
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    yield home
    close_stores()


def test_a_mistyped_collection_gets_a_did_you_mean(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["search", "kb", "q", "--collection", "note"], capsys)
    assert code != 0 and "collection 'note' not found — did you mean 'notes'?" in out + err
    code, out, err = run(["ask", "what is in my notes?", "--collection", "note",
                          "--connector", "offline"], capsys)
    assert "collection 'note' not found — did you mean 'notes'?" in out + err
    # a collection the caller cannot read a chunk of is not suggested
    code, out, err = run(["search", "kb", "q", "--collection", "secret"], capsys)
    assert "collection 'secret' not found" in out + err and "did you mean" not in out + err
    code, out, err = run(["search", "kb", "q", "--collection", "secret", "--user", "alice"],
                         capsys)
    assert "did you mean 'secrets'?" in out + err


def test_a_mistyped_assistant_gets_a_did_you_mean(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for command in (["ask", "hi"], ["search", "kb", "hi"]):
        code, _, err = run([*command, "--assistant", "dmeo"], capsys)
        assert code == 2 and "did you mean 'demo'?" in err and len(err.splitlines()) == 1


def test_kb_repair_names_its_argument_the_same_everywhere(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["kb", "repair"], capsys)
    assert code == 2 and "Missing argument 'COLLECTION'" in err and "name" not in err
    code, out, _ = run(["kb", "repair", "--help"], capsys)
    assert "COLLECTION" in out and " name " not in out
    assert "kb repair COLLECTION" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_a_search_title_counts_in_the_right_number(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    from agent_search.cli.search import render_result
    from agent_search.types import Result, ResultItem

    render_result(Result(type="kb", query="q", items=[ResultItem(title="t", score=0.5)]))
    out = " ".join(capsys.readouterr().out.split())
    assert "— 1 item," in out and "1 items" not in out
