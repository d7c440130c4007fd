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
