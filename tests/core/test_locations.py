"""Configuration, assistants and data are found from anywhere inside a project, and
nothing lands in the directory a command happened to run in (issue 13 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_search._locations import default_home, find_assistants_dir, find_config_dir
from agent_search.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    (root / "config" / "search.yao").write_text("{}")
    helper = root / "assistants" / "helper"
    helper.mkdir(parents=True)
    (helper / "package.yao").write_text(json.dumps({"name": "helper", "connector": "offline",
                                                    "search": False}))
    (root / "docs" / "deep").mkdir(parents=True)
    for name in ("AGENT_SEARCH_CONFIG", "AGENT_SEARCH_ASSISTANTS", "AGENT_SEARCH_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return root


def test_found_by_walking_up_from_a_sub_folder(project: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project / "docs" / "deep")
    assert find_config_dir() == project / "config"
    assert find_assistants_dir() == project / "assistants"
    assert default_home() == project / ".agent_search"


def test_environment_wins(project: Path, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setenv("AGENT_SEARCH_CONFIG", str(tmp_path / "other-config"))
    monkeypatch.setenv("AGENT_SEARCH_ASSISTANTS", str(tmp_path / "other-assistants"))
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(tmp_path / "data"))
    assert find_config_dir() == tmp_path / "other-config"
    assert find_assistants_dir() == tmp_path / "other-assistants"
    assert default_home() == tmp_path / "data"


def test_outside_a_project_data_goes_to_the_per_user_folder(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert find_config_dir() is None
    assert default_home() == tmp_path / "xdg" / "agent-search"


def test_cli_from_a_sub_folder_finds_the_assistant_and_leaves_no_stray_folder(
        project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    deep = project / "docs" / "deep"
    monkeypatch.chdir(deep)
    with pytest.raises(SystemExit) as info:
        main(["ask", "hello there", "--assistant", "helper", "--json"])
    out = capsys.readouterr().out
    assert info.value.code == 0, out
    assert '"event": "done"' in out
    with pytest.raises(SystemExit):
        main(["kb", "list"])
    assert list(deep.iterdir()) == []
