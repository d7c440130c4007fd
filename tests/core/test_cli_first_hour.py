"""The command line as a new user meets it (issue 31 item 5): ``ask --collection``, a typo
blamed on the file that holds it, did-you-mean for search types, plurals, and the web
notice said once per process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_search.cli import main
from agent_search.cli.app import plural
from agent_search.types import ResultItem


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_a_search_type_typo_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["search", "wbe", "q"], capsys)
    assert code == 2 and "did you mean 'web'?" in err and len(err.splitlines()) == 1
    code, _, err = run(["search", "zzz", "q"], capsys)
    assert code == 2 and "did you mean" not in err
    code, _, err = run(["search", "kb", "q", "--mode", "dens"], capsys)
    assert code == 2 and "did you mean 'dense'?" in err


def test_plurals() -> None:
    assert [plural(n, "chunk") for n in (0, 1, 2)] == ["0 chunks", "1 chunk", "2 chunks"]
    assert plural(1, "query", "queries") == "1 query" and plural(3, "query", "queries") == \
        "3 queries"


def _project(tmp_path: Path, search_yao: str, package: dict[str, object]) -> Path:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "search.yao").write_text(search_yao)
    adir = tmp_path / "assistants" / "a"
    adir.mkdir(parents=True)
    (adir / "package.yao").write_text(json.dumps(package, indent=1))
    return tmp_path


def test_ask_blames_the_file_that_holds_the_typo(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo in config/search.yao's web section was blamed on the assistant's
    package.yao, which also sets ``search.web`` (the last file to touch the section)."""
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "home"))
    root = _project(tmp_path, '{\n  "web": {\n    "provder": "tavily"\n  }\n}\n',
                    {"name": "a", "connector": "offline",
                     "search": {"web": {"max_results": 3}}})
    for command in (["ask", "hi"], ["search", "kb", "hi"]):
        code, _, err = run([*command, "--assistant", "a", "--config",
                            str(root / "config")], capsys)
        assert code == 2, err
        assert "search.yao: web.provder: unknown key (line 3)" in err, err
        assert "package.yao" not in err and "did you mean 'provider'" in err
    # a typo in the package's own section is still the package's
    (root / "config" / "search.yao").write_text("{}")
    (root / "assistants" / "a" / "package.yao").write_text(json.dumps(
        {"name": "a", "connector": "offline", "search": {"web": {"max_reslts": 3}}},
        indent=1))
    code, _, err = run(["ask", "hi", "--assistant", "a", "--config", str(root / "config")],
                       capsys)
    assert code == 2 and "package.yao: search.web.max_reslts: unknown key" in err, err


def test_the_web_notice_is_printed_once_per_process(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``make demo`` asks several questions in one process: "web search is off" once,
    never a red "search failed" line."""
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_SEARCH_TEST_NO_KEY", raising=False)
    monkeypatch.setattr("agent_search.cli.ask._NOTICES_SHOWN", set())
    root = _project(tmp_path, '{"web": {"provider": "tavily", '
                              '"api_key_env": "AGENT_SEARCH_TEST_NO_KEY"}}',
                    {"name": "a", "connector": "offline", "search": {"web": True}})
    outs = []
    for question in ("first question", "second question"):
        code, out, err = run(["ask", question, "--assistant", "a", "--config",
                              str(root / "config")], capsys)
        assert code == 0, err
        outs.append(out)
    assert "Web search is off" in outs[0] and "AGENT_SEARCH_TEST_NO_KEY" in outs[0]
    assert "Web search is off" not in outs[1]
    assert not any("search failed" in o for o in outs)


def test_ask_about_a_collection_without_a_package(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ask --collection notes``: a kb search of that collection, no package.yao written
    (the collection is served by a kb handler of the test's own, registered on the
    assistant the command builds, so no embedding model is built here)."""
    from agent_search.agent import Assistant

    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "home"))
    assistant = Assistant.for_sources(collections=["notes", "more"])
    config = assistant.searcher.config
    assert config.enabled_types() == ["kb"] and config.kb.collections == ["notes", "more"]
    both = Assistant.for_sources(db_url="sqlite:///x.db", collections=["notes"])
    assert both.searcher.config.enabled_types() == ["kb", "db"]
    seen: list[list[str]] = []

    class Notes:
        type = "kb"

        def can_handle(self, ctx: object, request: object) -> bool:
            return True

        async def search(self, ctx: object, request: object) -> object:
            from agent_search.types import Result

            seen.append(list(request.collections))  # type: ignore[attr-defined]
            item = ResultItem(title="teacher", content="Ms. Okafor taught me to read.",
                              collection="notes", document_id="d1", score=0.9)
            return Result(type="kb", query=request.query, items=[item])  # type: ignore[attr-defined]

    monkeypatch.setattr(Assistant, "for_sources", _with_handler(Assistant.for_sources, Notes()))
    code, out, err = run(["ask", "Who taught me to read?", "--collection", "notes",
                          "--connector", "offline"], capsys)
    assert code == 0, err
    assert seen == [["notes"]]
    assert "Ms. Okafor taught me to read. #ref:1" in out


def _with_handler(build: object, handler: object) -> object:
    def wrapped(**kwargs: object) -> object:
        assistant = build(**kwargs)  # type: ignore[operator]
        assistant.searcher.registry.register(handler, first=True)
        return assistant
    return wrapped
