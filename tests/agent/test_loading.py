"""Loading assistants: JSONC package, hooks.py, config/agent.yml; errors name file and
line (or key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search.agent import AgentSettings, Assistant
from agent_search.errors import ConfigError


def write(tmp_path: Path, package: str, hooks: str | None = None) -> Path:
    adir = tmp_path / "assistants" / "a1"
    adir.mkdir(parents=True)
    (adir / "package.yao").write_text(package)
    if hooks is not None:
        (adir / "hooks.py").write_text(hooks)
    return adir


def test_jsonc_with_comments_and_trailing_commas_loads(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, """{
      // the assistant
      "name": "Demo",
      "connector": "offline",
      "prompts": "You are helpful.",
      "search": {"web": true, "kb": {"threshold": 0.5},},
      "kb": {"collections": ["docs"]},
      "db": {"models": ["product", "order"]},
    }""")
    a = Assistant.load(adir, builtin_handlers=False)
    assert a.id == "a1" and a.package.name == "Demo"
    assert a.package.prompts[0].role == "system"
    cfg = a.searcher.config
    assert cfg.enabled_types() == ["web", "kb"]
    assert cfg.kb.collections == ["docs"] and cfg.kb.min_score == 0.5  # threshold is min_score
    assert cfg.db.models == ["product", "order"]


def test_jsonc_syntax_error_names_file_and_line(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, '{\n  "name": "x",\n  "search": {"web": tru}\n}')
    with pytest.raises(ConfigError) as err:
        Assistant.load(adir, builtin_handlers=False)
    assert "package.yao" in str(err.value) and "line 3" in str(err.value)


def test_bad_value_names_key(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, '{"name": "x", "prompts": [{"role": "robot", "content": "x"}]}')
    with pytest.raises(ConfigError, match=r"package.yao: prompts.0.role"):
        Assistant.load(adir, builtin_handlers=False)


def test_hooks_syntax_error_names_file_and_line(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, "{}", "async def create(ctx, messages, options):\n"
                                 "    return {\n\n    x = = 1\n")
    with pytest.raises(ConfigError) as err:
        Assistant.load(adir, builtin_handlers=False)
    assert "hooks.py" in str(err.value) and "syntax error at line" in str(err.value)


def test_hooks_error_at_import_names_line(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, "{}", "import os\n\nvalue = 1 / 0\n")
    with pytest.raises(ConfigError, match=r"hooks.py: error while loading at line 3: "
                                          r"ZeroDivisionError"):
        Assistant.load(adir, builtin_handlers=False)


def test_sync_hook_is_rejected(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, "{}", "\ndef create(ctx, messages, options):\n    return None\n")
    with pytest.raises(ConfigError, match=r"line 2: hook 'create' must be an 'async def'"):
        Assistant.load(adir, builtin_handlers=False)


def test_hook_with_wrong_arity_is_rejected(tmp_path: Path, home: Path) -> None:
    adir = write(tmp_path, "{}", "async def next(ctx):\n    return None\n")
    with pytest.raises(ConfigError, match=r"hook 'next' must take 2 arguments"):
        Assistant.load(adir, builtin_handlers=False)


def test_missing_package(tmp_path: Path, home: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="assistant package not found"):
        Assistant.load(tmp_path / "empty", builtin_handlers=False)


def test_agent_yml_validation_names_key(tmp_path: Path) -> None:
    (tmp_path / "agent.yml").write_text("connectors:\n  x:\n    base_url: http://h\n")
    with pytest.raises(ConfigError, match=r"agent.yml: connectors.x.model: Field required"):
        AgentSettings.load(tmp_path)
    (tmp_path / "agent.yml").write_text("mcp:\n  servers:\n    s: {timeout: 3}\n")
    with pytest.raises(ConfigError, match=r"exactly one of 'command' \(stdio\) or 'url'"):
        AgentSettings.load(tmp_path)


def test_uses_from_agent_yml_and_package(tmp_path: Path, home: Path) -> None:
    cdir = tmp_path / "config"
    cdir.mkdir()
    (cdir / "agent.yml").write_text("uses:\n  keyword: mcp:nlp.keywords\n  rerank: builtin\n"
                                    "mcp:\n  servers:\n    nlp: {command: python}\n")
    adir = write(tmp_path, '{"uses": {"rerank": "workers.rerank"}}')
    (adir.parent / "workers.rerank").mkdir()
    (adir.parent / "workers.rerank" / "package.yao").write_text("{}")
    a = Assistant.load(adir, config_dir=cdir, builtin_handlers=False)
    assert a.searcher.config.uses.keyword == "mcp:nlp.keywords"
    assert a.searcher.config.uses.rerank == "workers.rerank"
