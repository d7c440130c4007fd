"""Regression and property tests for configuration files and command-line values
(issue 11 item 12): every configuration error names its file, nothing ends in a
traceback, bad values exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search import ConfigError, Searcher
from agent_search.cli import main
from agent_search.config import MAX_CONFIG_BYTES
from agent_search.loader import load_config


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    return int(info.value.code or 0), capsys.readouterr().err


def _config_dir(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    (folder / "search.yao").write_text(text, encoding="utf-8")
    return folder


def test_deeply_nested_search_yao_is_a_config_error_not_a_recursion_error(
        tmp_path: Path) -> None:
    folder = _config_dir(tmp_path, '{"a":' * 5000 + "1" + "}" * 5000)
    with pytest.raises(ConfigError, match=r"search\.yao: nested deeper than"):
        load_config(folder)


def test_deeply_nested_agent_yml_is_a_config_error(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path, "{}")
    (folder / "agent.yml").write_text("uses: " + "[" * 5000 + "]" * 5000, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"agent\.yml: nested deeper than"):
        load_config(folder)


def test_oversized_config_file_is_refused_before_parsing(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path, '{"web": {"provider": "' + "x" * MAX_CONFIG_BYTES + '"}}')
    with pytest.raises(ConfigError, match=r"search\.yao: file too large"):
        load_config(folder)


@pytest.mark.parametrize(("section", "needle"), [
    ({"db": {"max_resultz": 5}}, "db.max_resultz: unknown key"),
    ({"db": {"url": "notaurl://x"}}, "db.url: unsupported database 'notaurl'"),
    ({"kb": {"chunk_tokenz": 5}}, "kb.chunk_tokenz: unknown key"),
    ({"web": {"providr": "tavily"}}, "web.providr: unknown key"),
])
def test_handler_section_errors_name_the_file(tmp_path: Path, section: dict[str, object],
                                              needle: str) -> None:
    folder = _config_dir(tmp_path, json.dumps(section))
    with pytest.raises(ConfigError) as info:
        Searcher.from_config(folder)
    assert str(info.value).startswith(f"{folder / 'search.yao'}: {needle}")


def test_assistant_section_errors_name_the_package(tmp_path: Path) -> None:
    assistant = tmp_path / "helper"
    assistant.mkdir()
    (assistant / "package.yao").write_text('{"search": {"db": {"max_resultz": 1}}}')
    with pytest.raises(ConfigError,
                       match=r"helper/package\.yao: search\.db\.max_resultz: unknown key"):
        Searcher.from_config(None, assistant_dir=assistant)


@pytest.mark.parametrize("limit", ["500", "100000000", "0", "-1"])
def test_bad_limit_values_exit_2(limit: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _cli(["search", "web", "q", "--limit", limit], capsys)
    assert code == 2
    assert "--limit" in err and err.count("\n") == 1


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["web", "kb", "db", "options", "rerank", "weights", "citation", "uses",
                         "provider", "max_results", "url", "timeout", "collections", "x"]),
        inner, max_size=4),
    max_leaves=12)


@given(data=st.dictionaries(st.sampled_from(
    ["web", "kb", "db", "options", "rerank", "weights", "citation", "uses", "query", "home"]),
    _json, max_size=4))
def test_any_search_yao_loads_or_names_the_file(tmp_path_factory: pytest.TempPathFactory,
                                                data: dict[str, object]) -> None:
    folder = _config_dir(tmp_path_factory.mktemp("cfg"), json.dumps(data))
    try:
        Searcher.from_config(folder)
    except ConfigError as exc:
        assert str(exc).startswith(str(folder / "search.yao")), str(exc)


@given(blob=st.binary(max_size=300))
def test_any_bytes_as_search_yao_load_or_name_the_file(
        tmp_path_factory: pytest.TempPathFactory, blob: bytes) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    (folder / "search.yao").write_bytes(blob)
    try:
        load_config(folder)
    except ConfigError as exc:
        assert str(exc).startswith(str(folder / "search.yao")), str(exc)


def test_deeply_nested_package_yao_is_a_config_error(tmp_path: Path) -> None:
    from agent_search.agent import Assistant

    assistant = tmp_path / "deep"
    assistant.mkdir()
    (assistant / "package.yao").write_text('{"a":' * 5000 + "1" + "}" * 5000)
    with pytest.raises(ConfigError, match=r"deep/package\.yao: nested deeper than"):
        Assistant.load(assistant)


def test_package_yao_syntax_errors_name_file_and_line(tmp_path: Path) -> None:
    from agent_search.agent import Assistant

    assistant = tmp_path / "broken"
    assistant.mkdir()
    (assistant / "package.yao").write_text('{\n  "name": "x",\n  "search": {,}\n}')
    with pytest.raises(ConfigError, match=r"broken/package\.yao: invalid JSONC at line 3"):
        Assistant.load(assistant)


@pytest.mark.parametrize(("args", "needle"), [
    (["search", "web", "q", "--user", "u1\n"], "--user"),
    (["search", "web", "q", "--team", " t1"], "--team"),
    (["search", "web", "q", "--user", "x" * 129], "--user"),
    (["ask", "hi", "--user", "u\x1b[31m"], "--user"),
    (["mcp", "--team", "t\u2028"], "--team"),
    (["search", "kb", "q", "--min-score", "nan"], "min_score"),
    (["search", "kb", "q", "--min-score", "-0.1"], "min_score"),
    (["search", "kb", "q", "--min-score", "1e999"], "min_score"),
])
def test_hostile_identity_and_floor_flags_exit_2(args: list[str], needle: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _cli(args, capsys)
    assert code == 2 and needle in err and err.count("\n") == 1, err


@given(flag=st.booleans(), field=st.sampled_from(
    ["options.timeout", "options.max_limit", "kb.min_score", "db.max_results"]))
def test_true_or_false_for_a_number_in_search_yao_names_the_key(
        tmp_path_factory: pytest.TempPathFactory, flag: bool, field: str) -> None:
    """``timeout: true`` was read as one second (lax pydantic), with no word said."""
    section, key = field.split(".")
    folder = _config_dir(tmp_path_factory.mktemp("flag"), json.dumps({section: {key: flag}}))
    with pytest.raises(ConfigError, match=rf"{section}\.{key}[\s\S]*expected a number"):
        load_config(folder)


def test_true_for_a_connector_timeout_in_agent_yml_names_the_key(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path, "{}")
    (folder / "agent.yml").write_text(
        "connectors:\n  local:\n    base_url: http://127.0.0.1:1/v1\n    model: m\n"
        "    timeout: yes\n", encoding="utf-8")
    from agent_search.agent.settings import AgentSettings
    with pytest.raises(ConfigError, match=r"timeout[\s\S]*expected a number"):
        AgentSettings.load(folder)
