"""Every shell and Python example of README.md and docs/ runs, so none can rot.

Each runnable block (see tests/support/doc_examples.py for the rules and directives) runs
in a fresh copy of the project (``config/``, ``assistants/``, plus the files the page
defines) with its own copy of a data home built by ``make demo``'s code path (the sample
shop database and a ``docs`` collection), offline: API keys are unset.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import anyio
import httpx
import pytest

from agent_search.kb import close_stores

from ..support.doc_examples import ROOT, Block, all_blocks, commands
from ..support.doc_examples import SHELL as SHELL_LANGS

BIN = Path(sys.executable).parent
CLI_NAMES = ("agent-search", ".venv/bin/agent-search")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
KEYS = ("OPENAI_API_KEY", "TAVILY_API_KEY", "SERPER_API_KEY", "BING_API_KEY",
        "BRAVE_API_KEY", "GOOGLE_API_KEY", "SERPAPI_API_KEY")


def _params() -> list[object]:
    out: list[object] = []
    for block in all_blocks():
        if not block.runnable:
            continue
        marks: list[pytest.MarkDecorator] = []
        if "skip" in block.directives:
            marks.append(pytest.mark.skip(reason=f"{block.id}: {block.directives['skip']}"))
        if "slow" in block.directives:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(block, id=block.id, marks=marks))
    return out


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home built by ``make demo``'s code (agent_search.demo.build_demo_data),
    with three small pages in the ``docs`` collection to keep it quick."""
    from agent_search import demo

    home = tmp_path_factory.mktemp("docs-examples") / "home"
    pages = [ROOT / "docs" / name for name in
             ("how-a-search-runs.md", "citations-and-safety.md", "merging-and-weights.md")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_SEARCH_HOME", str(home))
        mp.setattr(demo, "_knowledge_sources", lambda: pages)
        try:
            anyio.run(demo.build_demo_data)
        finally:
            close_stores()
    return home


def _copy_project(root: Path, demo_home: Path) -> Path:
    """A copy of the project's configuration and assistants under ``root``, with a copy
    of the demo data home where a project keeps it (``.agent_search``)."""
    for folder in ("config", "assistants"):
        shutil.copytree(ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("docs", "README.md"):
        (root / name).symlink_to(ROOT / name)
    home = root / ".agent_search"
    home.mkdir()
    for entry in demo_home.iterdir():
        if entry.name == "models":  # the model files: large, read-only, shared
            (home / "models").symlink_to(entry, target_is_directory=True)
        elif entry.is_dir():
            shutil.copytree(entry, home / entry.name)
        else:
            shutil.copy2(entry, home / entry.name)
    return home


def _offline_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(AGENT_SEARCH_HOME=str(home), COLUMNS="120",
               PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


@pytest.fixture
def project(tmp_path: Path, demo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project and of the demo data home, the current directory; offline."""
    root = tmp_path / "project"
    home = _copy_project(root, demo_home)
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    for key, value in _offline_env(home).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(root)
    return root


def _write_files(block: Block, root: Path) -> None:
    """The page's file blocks, written into the project."""
    from ..support.doc_examples import blocks

    for other in blocks(block.page):
        if other.file:
            target = root / other.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(other.code.split("\n", 1)[1], encoding="utf-8")


def _needs_shell(command: str) -> bool:
    """Pipes, redirections, expansions or globs outside quotes: run it with bash."""
    unquoted = _QUOTED.sub("", command)
    single_unquoted = re.sub(r"'[^']*'", "", command)  # "$x" expands in double quotes
    return bool(set(unquoted) & set("|&;<>()*?[") or set(single_unquoted) & set("$`"))


def _run_command(command: str, root: Path, capsys: pytest.CaptureFixture[str]
                 ) -> tuple[int, str]:
    argv = shlex.split(command, comments=True)
    if argv[0] in CLI_NAMES and not _needs_shell(command):
        from agent_search.cli import main

        code = 0
        try:
            main(argv[1:])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            close_stores()
        out, err = capsys.readouterr()
        return code, out + err
    done = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory, demo_home: Path) -> Iterator[str]:
    """``agent-search serve`` on a free port, for all the examples that talk to it (they
    only read): a project copy of its own."""
    root = tmp_path_factory.mktemp("served") / "project"
    env = _offline_env(_copy_project(root, demo_home))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(BIN / "agent-search"), "serve", "--port", str(port)],
                            cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                stderr = proc.stderr.read() if proc.stderr else ""
                pytest.fail(f"agent-search serve exited: {stderr}")
            try:
                if httpx.get(f"http://{address}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("agent-search serve did not start within 90 s")
            time.sleep(0.2)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def output_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TextIO]:
    """Where Python examples print: a real file (an MCP client hands ``sys.stderr`` to
    its server process, which needs a file descriptor), open for the whole session
    (``mcp.client.stdio`` binds the ``sys.stderr`` of its first import as a default)."""
    with open(tmp_path_factory.mktemp("docs-output") / "output.txt", "w+",
              encoding="utf-8") as output:
        yield output


_ERROR_SHOWN = re.compile(r'"error":\s*"|^agent-search: (?:error|warning):|search failed:'
                          r"|^(?:✗|error:)", re.MULTILINE)
"""An error in an example's output: a Result or event whose ``error`` is set (JSON), the
CLI's error line, a failed search in ``ask``'s progress, ``search``'s failed Result."""


def _check_output(block: Block, output: str, expected_exit: int) -> None:
    """An example that is expected to succeed shows no error: a search that failed inside
    an exit-0 command (a Result with ``error``) is a broken example too."""
    if expected_exit != 0:
        return
    found = _ERROR_SHOWN.search(output)
    assert found is None, f"{block.id}: its output shows an error:\n{output}"


def _json_errors(response: httpx.Response) -> list[str]:
    """The ``error`` values of a read JSON answer: a Result, a list of them, an API
    error."""
    if "json" not in response.headers.get("content-type", "") or not response.is_closed:
        return []
    try:
        body = response.json()
    except ValueError:
        return []
    bodies = body if isinstance(body, list) else [body]
    return [str(b["error"]) for b in bodies if isinstance(b, dict) and b.get("error")]


@contextlib.contextmanager
def _http_answers_checked(block: Block) -> Iterator[list[str]]:
    """Every answer an example reads through httpx (the HTTP examples): one with an error
    (an HTTP error, or a 200 whose Result has ``error`` set) is recorded."""
    errors: list[str] = []
    send = httpx.Client.send

    def checked(self: httpx.Client, request: httpx.Request, **kwargs: object) -> httpx.Response:
        response = send(self, request, **kwargs)  # type: ignore[arg-type]
        if response.status_code >= 400:
            errors.append(f"{request.method} {request.url.path}: HTTP {response.status_code}")
        errors.extend(f"{request.method} {request.url.path}: {e}"
                      for e in _json_errors(response))
        return response

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(httpx.Client, "send", checked)
        yield errors


def _run_python(block: Block, code: str, output: TextIO) -> None:
    """``exec`` the block as a script; on failure, the error shows what it printed. An
    HTTP answer with an error, or printed output showing one, fails it too."""
    output.seek(0)
    output.truncate()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output), \
                _http_answers_checked(block) as http_errors:
            exec(compile(code, block.id, "exec"), {"__name__": "__main__"})
    except BaseException as exc:
        output.seek(0)
        raise AssertionError(f"{block.id} raised {exc!r}; its output:\n{output.read()}"
                             ) from exc
    finally:
        close_stores()
    assert not http_errors, f"{block.id}: an HTTP answer holds an error: {http_errors}"
    output.seek(0)
    _check_output(block, output.read(), 0)


@pytest.mark.parametrize("block", _params())
def test_example_runs(block: Block, project: Path, request: pytest.FixtureRequest,
                      capsys: pytest.CaptureFixture[str], output_file: TextIO) -> None:
    _write_files(block, project)
    code = block.code
    if "server" in block.directives:
        code = code.replace("127.0.0.1:8000", request.getfixturevalue("served"))
    expected = int(block.directives.get("exit", "0") or 0)
    if block.lang in ("python", "py"):
        _run_python(block, code, output_file)
        return
    for command in commands(code):
        status, output = _run_command(command, project, capsys)
        assert status == expected, f"{block.id}: `{command}` exited {status}:\n{output}"
        assert "Traceback" not in output, f"{block.id}: `{command}`:\n{output}"
        _check_output(block, output, expected)


def test_no_shell_example_loses_a_dollar_amount_to_the_shell() -> None:
    """``"under $50"`` in double quotes reaches the program as "under 0" (the shell
    expands ``$5``): such a question must be in single quotes. The examples run
    in-process, without a shell, so this is checked on the text."""
    dollar_in_double_quotes = re.compile(r'"(?:[^"\\]|\\.)*\$\d(?:[^"\\]|\\.)*"')
    for block in all_blocks():
        if block.lang in SHELL_LANGS:
            for command in commands(block.code):
                unquoted = re.sub(r"'[^']*'", "''", command)
                assert not dollar_in_double_quotes.search(unquoted), f"{block.id}: {command}"
                assert not re.search(r"(?<!\\)\$\d", unquoted), f"{block.id}: {command}"
