"""Documents added and removed over HTTP while the service runs (issue 24 item 3): the
caller's key owns what it adds and limits what it removes; bad names, too many documents
and non-JSON bodies are refused with one clear error."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search.cli._kb_remote import held_by_server
from agent_search.cli.app import app
from agent_search.kb._manage import list_documents
from agent_search.server import Service

from .harness import KEYS, serve_with_kb, write_project

runner = CliRunner()


def _auth(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[who]}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-serve")
    cdir, adir = write_project(root)
    yield from serve_with_kb(root, cdir, adir)


def _owners(service: Service, collection: str) -> dict[str, set[str | None]]:
    docs = anyio.run(lambda: list_documents(service.searcher.config, collection))
    out: dict[str, set[str | None]] = {}
    for doc in docs:
        out.setdefault(doc["source"], set()).add(doc["owner"])
    return out


def test_add_and_remove_documents_as_the_caller(served: tuple[str, Service]) -> None:
    url, service = served
    with httpx.Client(base_url=url, timeout=120) as client:
        body = {"documents": [{"name": "notes.md", "text": "# Bees\n\nBees make honey.\n"},
                              {"name": "todo", "text": "Buy a new bike chain."}]}
        added = client.post("/v1/kb/team/documents", json=body, headers=_auth("alice"))
        assert added.status_code == 200, added.text
        assert added.json()["documents"] == 2 and added.json()["added"] >= 2
        again = client.post("/v1/kb/team/documents", json=body, headers=_auth("alice"))
        assert again.json()["added"] == 0 and again.json()["unchanged"] >= 2
        bob = client.post("/v1/kb/team/documents", headers=_auth("bob"),
                          json={"documents": [{"name": "notes.md", "text": "Wasps."}]})
        assert bob.status_code == 200, bob.text
        assert _owners(service, "team") == {"upload:notes.md": {"alice", "bob"},
                                            "upload:todo.txt": {"alice"}}

        gone = client.delete("/v1/kb/team/documents/upload:notes.md", headers=_auth("bob"))
        assert gone.status_code == 200, gone.text
        assert [d["owner"] for d in gone.json()["removed"]] == ["bob"]
        twice = client.delete("/v1/kb/team/documents/upload:notes.md", headers=_auth("bob"))
        assert twice.status_code == 404 and "of yours" in twice.json()["error"]["message"]
        theirs = client.delete("/v1/kb/team/documents/upload:todo.txt", headers=_auth("bob"))
        assert theirs.status_code == 404
        assert _owners(service, "team") == {"upload:notes.md": {"alice"},
                                            "upload:todo.txt": {"alice"}}


@pytest.mark.parametrize(("body", "message"), [
    ({"documents": [{"name": "../etc/passwd", "text": "x"}]}, "without '/'"),
    ({"documents": [{"name": "deck.pdf", "text": "x"}]}, "text documents are"),
    ({"documents": [{"name": ".hidden", "text": "x"}]}, "not starting with '.'"),
    ({"documents": [{"name": f"n{i}", "text": "x"} for i in range(101)]}, "documents"),
    ({"documents": []}, "documents"),
])
def test_bad_documents_are_refused(served: tuple[str, Service], body: dict[str, object],
                                   message: str) -> None:
    url, _ = served
    answer = httpx.post(f"{url}/v1/kb/team/documents", json=body, headers=_auth("alice"),
                        timeout=60)
    assert answer.status_code == 422, answer.text
    assert message in answer.json()["error"]["message"]


def test_uploads_need_a_key_and_json(served: tuple[str, Service]) -> None:
    url, _ = served
    anonymous = httpx.post(f"{url}/v1/kb/team/documents", json={"documents": []}, timeout=60)
    assert anonymous.status_code == 401
    form = httpx.post(f"{url}/v1/kb/team/documents", files={"f": ("a.txt", b"x")},
                      headers=_auth("alice"), timeout=60)
    assert form.status_code == 415
    bad_collection = httpx.post(f"{url}/v1/kb/eval-x/documents", headers=_auth("alice"),
                                json={"documents": [{"name": "a", "text": "x"}]}, timeout=60)
    assert bad_collection.status_code == 422 and "reserved" in bad_collection.text


def test_a_path_outside_the_collection_is_just_a_name(served: tuple[str, Service]) -> None:
    url, _ = served
    answer = httpx.delete(f"{url}/v1/kb/team/documents/..%2F..%2Fetc%2Fpasswd",
                          headers=_auth("alice"), timeout=60)
    assert answer.status_code == 404


def test_the_cli_sends_the_work_to_the_server(served: tuple[str, Service], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    url, service = served
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "bikes.md").write_text("# Bikes\n\nLube the chain every 300 km.\n")
    (folder / "data.jsonl").write_text("{}\n")
    monkeypatch.setenv("MY_KEY", KEYS["alice"])
    out = runner.invoke(app, ["kb", "ingest", str(folder), "-c", "cli", "--server", url,
                              "--api-key-env", "MY_KEY", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["documents"] == 1 and report["added"] >= 1
    assert "--server takes" in report["skipped"][0]["reason"]
    assert _owners(service, "cli") == {"upload:bikes.md": {"alice"}}
    gone = runner.invoke(app, ["kb", "rm", str(folder / "bikes.md"), "-c", "cli",
                               "--server", url, "--api-key-env", "MY_KEY"])
    assert gone.exit_code == 0, gone.output
    assert "removed upload:bikes.md" in gone.stdout
    again = runner.invoke(app, ["kb", "rm", "upload:bikes.md", "-c", "cli", "--server", url,
                                "--api-key-env", "MY_KEY"])
    assert again.exit_code == 1 and "404" in again.stderr


def test_a_store_held_by_a_local_server_is_named() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "serve",
                             "--port", "8123"])
    try:
        # until the child has exec'd, /proc shows the parent's command line
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        deadline = time.monotonic() + 30
        while b"serve" not in cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        hint = held_by_server(f"the knowledge base at /x is open in another process "
                              f"(pid {proc.pid}); stop that process")
    finally:
        proc.kill()
        proc.wait()
    assert hint == (f"; it is held by a running 'agent-search serve' (pid {proc.pid}): "
                    "send the work to it with --server http://127.0.0.1:8123")
    assert "--server" in held_by_server("open in another process")
