"""Commands that only read never create a data home's folders, and ``kb list`` says
which data home it read (outside a project it is the per-user one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_search.cli import main
from agent_search.kb import close_stores


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_reading_an_empty_data_home_outside_a_project_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "somewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.delenv("AGENT_SEARCH_HOME", raising=False)
    monkeypatch.delenv("AGENT_SEARCH_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    home = tmp_path / "xdg" / "agent-search"
    try:
        code, out, err = run(["kb", "list"], capsys)
        assert code == 0 and "no collections" in out
        assert f"data home: {home} (no project here; set $AGENT_SEARCH_HOME" in \
            " ".join(err.split())
        code, out, err = run(["kb", "list", "notes"], capsys)
        assert code == 2 and "collection 'notes' not found" in err
        code, out, err = run(["kb", "repair", "notes"], capsys)
        assert code == 2 and "collection 'notes' not found" in err
        code, out, err = run(["search", "kb", "anything", "--json"], capsys)
        result = json.loads(out)  # nothing to find, nothing wrong: said in a warning
        assert result["error"] is None and result["items"] == []
        assert any(f"no collections in {home}" in w for w in result["warnings"])
        code, out, err = run(["search", "kb", "anything", "--collection", "notes"], capsys)
        said = " ".join((out + err).split())
        assert f"collection 'notes' not found: no collections in {home}" in said
        assert "kb ingest" in said
    finally:
        close_stores()
    assert not (tmp_path / "xdg").exists()
    assert list(here.iterdir()) == []


def test_kb_list_names_the_data_home_from_the_environment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "mine"))
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["kb", "list"], capsys)
    assert code == 0 and f"data home: {tmp_path / 'mine'} ($AGENT_SEARCH_HOME)" in \
        " ".join(err.split())


def test_the_first_ingest_in_a_data_home_says_it_prepares_the_model(
        tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """~20 s of silence before the progress: the model is assembled in the data home
    the first time. Said then (and the model prepared before the ingest starts), not
    when the home already holds it."""
    import agent_search.embedding as embedding
    from agent_search.cli.kb import _prepare_model
    from agent_search.kb.settings import KBSettings
    from agent_search.loader import load_config

    (tmp_path / "a.md").write_text("# Notes\n\nAlpha beta gamma.\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["kb", "ingest", "a.md", "-c", "notes"], capsys)
    assert code == 0, err
    assert "preparing the embedding model" not in err  # this home holds it already

    fresh = tmp_path / "fresh"
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(fresh))
    config = load_config(None)
    assert not embedding.model_prepared(KBSettings.from_config(config), fresh)
    assert embedding.model_prepared(KBSettings.from_config(config), home)
    built: list[Path] = []
    monkeypatch.setattr(embedding, "get_embedder", lambda s, h: built.append(h))
    _prepare_model(config)
    err = " ".join(capsys.readouterr().err.split())
    assert f"preparing the embedding model sentence-transformers/all-MiniLM-L6-v2 in " \
           f"{fresh / 'models'} (once per data home" in err
    assert built == [fresh]
