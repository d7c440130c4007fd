from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import ConfigError, SearchConfig, load_config
from agent_search.config import deep_merge

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_builtin_defaults_match_the_spec() -> None:
    c = SearchConfig()
    assert (c.weights.user, c.weights.hook, c.weights.auto) == (1.0, 0.8, 0.6)
    assert c.options.skip_threshold == 5 and c.rerank.top_n == 10
    assert c.citation.format == "#ref:{id}" and c.citation.auto_inject_prompt
    assert c.keyword.max_keywords == 10 and c.keyword.language == "auto"
    assert c.query.strict is False and c.uses.keyword == "builtin"


def test_project_config_folder_loads() -> None:
    c = load_config(ROOT / "config")
    assert c.web.provider == "tavily"


def test_layers_later_wins(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    write(
        cfg / "search.yao",
        """{
      // comments and trailing commas are fine
      "weights": {"hook": 0.7, "auto": 0.5,},
      "web": {"provider": "serper", "max_results": 7},
      "rerank": {"top_n": 8},
    }""",
    )
    write(cfg / "agent.yml", "uses:\n  keyword: mcp:nlp.keywords\n  rerank: ranker\n"
                             "mcp:\n  servers:\n    nlp: {command: python}\n")
    write(tmp_path / "assistants" / "ranker" / "package.yao", '{"name": "Ranker"}')
    asst = tmp_path / "assistants" / "bot"
    write(
        asst / "package.yao",
        """{
      "name": "Bot",
      "search": {"web": {"max_results": 3}, "kb": true, "weights": {"auto": 0.4},
                 "citation": {"format": "[{id}]"}},
      "kb": {"collections": ["docs", "faq"]},
      "db": {"models": ["product"]}
    }""",
    )
    c = load_config(cfg, assistant_dir=asst)
    assert c.weights.user == 1.0 and c.weights.hook == 0.7 and c.weights.auto == 0.4
    assert c.web.provider == "serper" and c.web.max_results == 3 and c.web.enabled is True
    assert c.kb.enabled is True and c.kb.collections == ["docs", "faq"]
    assert c.db.models == ["product"] and c.db.enabled is None  # models alone don't enable
    assert c.uses.keyword == "mcp:nlp.keywords" and c.uses.rerank == "ranker"
    assert c.citation.format == "[{id}]" and c.rerank.top_n == 8
    assert c.enabled_types() == ["web", "kb"]
    # hook/request layers are merged the same way
    hook = c.merged({"web": {"max_results": 2}, "kb": False})
    assert hook.web.max_results == 2 and hook.web.provider == "serper"
    assert hook.enabled_types() == ["web"]


def test_search_true_enables_every_type(tmp_path: Path) -> None:
    asst = tmp_path / "a"
    write(asst / "package.yao", '{"search": true}')
    assert load_config(None, assistant_dir=asst).enabled_types() == ["web", "kb", "db"]


def test_deep_merge_replaces_lists() -> None:
    assert deep_merge({"a": {"b": [1, 2], "c": 1}}, {"a": {"b": [3]}}) == {"a": {"b": [3], "c": 1}}


@pytest.mark.parametrize(
    ("text", "key", "msg"),
    [
        ('{"web": {"max_results": "many"}}', "web.max_results", "valid integer"),
        ('{"weights": {"hook": -1}}', "weights.hook", "greater than or equal"),
        ('{"citation": {"format": "#ref"}}', "citation.format", "must contain"),
        ('{"options": {"skip_treshold": 3}}', "options.skip_treshold", "unknown key"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, key: str, msg: str) -> None:
    f = write(tmp_path / "config" / "search.yao", text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "config")
    assert str(f) in str(info.value) and key in str(info.value) and msg in str(info.value)
    assert info.value.key == key


def test_invalid_jsonc_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "config" / "search.yao", '{"web": {')
    with pytest.raises(ConfigError, match="invalid JSONC") as info:
        load_config(tmp_path / "config")
    assert str(f) in str(info.value)


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "config" / "agent.yml", "uses:\n  keyword: [unclosed\n")
    with pytest.raises(ConfigError, match=r"agent.yml: invalid YAML \(line"):
        load_config(tmp_path / "config")


def test_missing_folder_and_package(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="configuration folder not found"):
        load_config(tmp_path / "nope")
    with pytest.raises(ConfigError, match="assistant package not found"):
        load_config(None, assistant_dir=tmp_path)


def test_home_follows_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "h"))
    assert SearchConfig().home == tmp_path / "h"


def test_from_config_overrides_reach_the_builtin_handlers(tmp_path: Path) -> None:
    from agent_search import Searcher

    url = f"sqlite:///{tmp_path / 'other.db'}"
    searcher = Searcher.from_config(None, overrides={"db": {"url": url}},
                                    overrides_file="command line")
    assert searcher.config.db.url == url
    (db_handler,) = searcher.registry.handlers("db")
    assert db_handler.config.db.url == url  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^command line: db\.max_results"):
        Searcher.from_config(None, overrides={"db": {"max_results": 0}},
                             overrides_file="command line")


# -- typos: every file validated whole, the same error on every command ----------------

PROJECT_FILES = {
    "config/agent.yml": "connectors:\n  local:\n    base_url: http://127.0.0.1:9/v1\n"
                        "    model: m\nuses:\n  keyword: builtin\nrecords: true\n",
    "config/search.yao": '{\n  // comment: "serach": 1\n  "web": {"max_results": 5},\n'
                         '  "options": {"timeout": 5}\n}\n',
    "config/models/item.mod.yao": '{"name": "Item", "table": {"name": "items"},\n'
                                  ' "columns": [{"name": "id", "type": "ID",\n'
                                  '              "validations": []}]}\n',
    "assistants/a/package.yao": '{\n  "name": "A",\n  "connector": "local",\n'
                                '  "prompts": "Answer.",\n  "search": {"kb": true}\n}\n',
}


def project(root: Path, file: str | None = None, old: str = "", new: str = "") -> Path:
    for name, text in PROJECT_FILES.items():
        if name == file:
            assert old in text
            text = text.replace(old, new, 1)
        write(root / name, text)
    return root


TYPOS = [
    # (file, original, typo, error text: file suffix, key, line, did-you-mean)
    ("assistants/a/package.yao", '"search"', '"serach"', "serach: unknown key (line 5)",
     "search"),
    ("assistants/a/package.yao", '"prompts"', '"promts"', "promts: unknown key (line 4)",
     "prompts"),
    ("assistants/a/package.yao", '"kb": true', '"kb": {"grahp": true}',
     "search.kb.grahp: unknown key (line 5)", "graph"),
    ("assistants/a/package.yao", '"local"', '"locl"', "connector: no connector 'locl'",
     "local"),
    ("config/agent.yml", "records:", "recrods:", "recrods: unknown key (line 7)", "records"),
    ("config/agent.yml", "keyword: builtin", "keyword: bultin",
     "uses.keyword: 'bultin' is neither builtin nor an assistant", "builtin"),
    ("config/agent.yml", "keyword: builtin", "keyword: mcp:nlp.kw",
     "uses.keyword: 'mcp:nlp.kw': no MCP server 'nlp'", None),
    ("config/agent.yml", "keyword: builtin", "rerank: model:ce",
     "uses.rerank: 'model:ce': no reranker 'ce'", None),
    ("config/agent.yml", "records: true", "server:\n  max_mesages: 3",
     "server.max_mesages: unknown key (line 8)", "max_messages"),
    ("config/search.yao", '"timeout"', '"timeuot"', "options.timeuot: unknown key (line 4)",
     "timeout"),
    ("config/search.yao", '"max_results"', '"max_resluts"',
     "web.max_resluts: unknown key (line 3)", "max_results"),
    ("config/search.yao", '"max_results": 5', '"provider": "google", "googel": {"cx": "a"}',
     "web.googel: unknown key (line 3)", "google"),
    ("config/search.yao", '"max_results": 5', '"provider": "google", "google": {"cxx": "a"}',
     "web.google.cxx: unknown key (line 3)", "cx"),
    ("config/search.yao", '"max_results": 5', '"provider": "googel"',
     "web.provider: unknown provider 'googel'; one of", "google"),
    ("config/search.yao", '"web": {"max_results": 5}', '"kb": {"store": "egde"}',
     "kb.store: unknown store 'egde'; one of edge, qdrant", "edge"),
    ("config/models/item.mod.yao", '"validations"', '"validation"',
     "columns.0.validation: unknown key (line 3)", "validations"),
]


@pytest.mark.parametrize(("file", "old", "new", "expected", "hint"), TYPOS)
def test_a_typo_is_one_error_with_file_key_line_and_hint(
        tmp_path: Path, file: str, old: str, new: str, expected: str, hint: str | None) -> None:
    from agent_search.agent import Assistant

    root = project(tmp_path, file, old, new)
    with pytest.raises(ConfigError) as info:  # handlers validate their own sections
        Assistant.load(root / "assistants" / "a")
    message = str(info.value)
    assert message.startswith(str(root / file) + ": ") and expected in message, message
    assert "\n" not in message
    assert (f"did you mean {hint!r}?" in message) if hint else "did you mean" not in message


def test_the_project_files_as_written_load(tmp_path: Path) -> None:
    from agent_search.agent import Assistant
    from agent_search.db.models import load_definitions

    root = project(tmp_path)
    assistant = Assistant.load(root / "assistants" / "a", builtin_handlers=False)
    assert assistant.package.connector == "local" and assistant.searcher.config.kb.enabled
    assert list(load_definitions(root / "config", None)) == ["item"]


def test_uses_may_name_what_exists(tmp_path: Path) -> None:
    root = project(tmp_path, "config/agent.yml", "uses:\n  keyword: builtin\n",
                   "uses:\n  keyword: a\n  query: mcp:nlp.dsl\n  rerank: model:ce\n"
                   "mcp:\n  servers:\n    nlp: {command: python}\n"
                   "rerankers:\n  ce: {url: http://127.0.0.1:9/rerank}\n")
    config = load_config(root / "config")
    assert (config.uses.keyword, config.uses.query, config.uses.rerank) == (
        "a", "mcp:nlp.dsl", "model:ce")
    write(root / "config" / "agent.yml", "uses:\n  query: model:ce\n")
    with pytest.raises(ConfigError, match=r"uses\.query: 'model:ce': model:<name> is for "
                                          r"uses\.rerank only"):
        load_config(root / "config")


def test_a_model_definition_typo_is_refused_but_yao_keys_are_not(tmp_path: Path) -> None:
    from agent_search.db.models import load_model_file

    f = write(tmp_path / "m.mod.yao", '{"name": "M", "table": {"name": "m", "engine": "x"},'
              ' "columns": [{"name": "id", "type": "ID", "default": 1, "crypt": "AES"}],'
              ' "indexes": [], "values": [], "option": {"timestamps": true, "logging": 1},'
              ' "relations": {"r": {"type": "hasOne", "model": "x", "key": "id",'
              ' "foreign": "id", "query": {}}}}')
    assert load_model_file(f, "m").table.name == "m"
    write(f, '{"name": "M", "table": "m", "colums": [{"name": "id"}]}')
    with pytest.raises(ConfigError, match=r"colums: unknown key \(line 1\) — did you mean "
                                          r"'columns'\?"):
        load_model_file(f, "m")


COMMANDS = [
    ["search", "web", "q"],
    ["search", "kb", "q"],
    ["ask", "q"],
    ["kb", "list"],
    ["serve", "--port", "9"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(("file", "old", "new", "expected"), [
    ("config/agent.yml", "records:", "recrods:", "agent.yml: recrods: unknown key (line 7) "
                                                 "— did you mean 'records'?"),
    ("config/agent.yml", "keyword: builtin", "keyword: bultin",
     "uses.keyword: 'bultin' is neither builtin"),
    ("config/search.yao", '"timeout"', '"timeuot"', "search.yao: options.timeuot: unknown key "
                                                    "(line 4) — did you mean 'timeout'?"),
    ("config/search.yao", '"max_results"', '"max_resluts"', "search.yao: web.max_resluts: "
     "unknown key (line 3) — did you mean 'max_results'?"),  # a handler's own section
])
def test_every_command_refuses_a_typo_the_same_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: list[str], file: str, old: str, new: str, expected: str) -> None:
    import uvicorn

    from agent_search.cli import main

    def serving(*args: object, **kwargs: object) -> None:
        pytest.fail("serve started although its configuration has a typo")

    monkeypatch.setattr(uvicorn, "run", serving)  # a regression fails here, never hangs
    root = project(tmp_path, file, old, new)
    monkeypatch.chdir(root)  # the project is found from here, as a user runs commands
    with pytest.raises(SystemExit) as info:
        main([*command, *(["--assistant", "a"] if command[0] == "ask" else [])])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("agent-search: error: ") and expected in err


def test_a_package_typo_is_refused_by_search_with_the_assistant_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from agent_search.cli import main

    project(tmp_path, "assistants/a/package.yao", '"search"', '"serach"')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["search", "web", "q", "--assistant", "a"])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and err.endswith("package.yao: serach: unknown key (line 5) "
                                                 "— did you mean 'search'?")


@pytest.mark.parametrize(("name", "hint"), [("nope", None), ("locl", "local")])
def test_ask_with_an_unknown_connector_exits_2_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        name: str, hint: str | None) -> None:
    from agent_search.cli import main

    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["ask", "q", "--assistant", "a", "--connector", name])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert f"--connector: no connector {name!r}" in err and "(defined: local; or 'offline')" in err
    assert (f"did you mean {hint!r}?" in err) if hint else "did you mean" not in err


def test_serve_with_workers_checks_every_assistant_before_forking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import uvicorn

    from agent_search.cli import main

    def serving(*args: object, **kwargs: object) -> None:
        pytest.fail("serve started although an assistant has a typo")

    monkeypatch.setattr(uvicorn, "run", serving)
    root = project(tmp_path, "assistants/a/package.yao", '"prompts"', '"promts"')
    write(root / "config" / "search.yao", '{"kb": {"url": "http://127.0.0.1:9"}}')
    monkeypatch.chdir(root)
    with pytest.raises(SystemExit) as info:
        main(["serve", "--port", "9", "--workers", "2"])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.endswith("package.yao: promts: unknown key (line 4) — did you mean 'prompts'?")


def test_kb_store_names_at_load_are_the_store_tables() -> None:
    """The names ``kb.store`` is checked against at load (without importing the store
    package) are the builtin ones of the store package's table, then its plug-ins'."""
    from agent_search.kb._store import _open
    from agent_search.kb.settings import BUILTIN_STORES, STORE_ENTRY_POINT_GROUP, store_names

    assert STORE_ENTRY_POINT_GROUP == _open.ENTRY_POINT_GROUP
    _open.load_plugins()
    assert set(BUILTIN_STORES) <= set(_open.STORES)
    assert set(store_names()) == set(_open.STORES)

