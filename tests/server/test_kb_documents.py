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
from typing import Any

import anyio
import httpx
import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search.cli._kb_remote import documents_of, held_by_server
from agent_search.cli.app import app
from agent_search.kb import list_documents
from agent_search.server import Service
from tests.support.http_service import KEYS, auth, serve_with_kb, write_project

runner = CliRunner()


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
        added = client.post("/v1/kb/team/documents", json=body, headers=auth("alice"))
        assert added.status_code == 200, added.text
        assert added.json()["documents"] == 2 and added.json()["added"] >= 2
        again = client.post("/v1/kb/team/documents", json=body, headers=auth("alice"))
        assert again.json()["added"] == 0 and again.json()["unchanged"] >= 2
        bob = client.post("/v1/kb/team/documents", headers=auth("bob"),
                          json={"documents": [{"name": "notes.md", "text": "Wasps."}]})
        assert bob.status_code == 200, bob.text
        assert _owners(service, "team") == {"upload:notes.md": {"alice", "bob"},
                                            "upload:todo.txt": {"alice"}}

        gone = client.delete("/v1/kb/team/documents/upload:notes.md", headers=auth("bob"))
        assert gone.status_code == 200, gone.text
        assert [d["owner"] for d in gone.json()["removed"]] == ["bob"]
        twice = client.delete("/v1/kb/team/documents/upload:notes.md", headers=auth("bob"))
        assert twice.status_code == 404 and "of yours" in twice.json()["error"]["message"]
        theirs = client.delete("/v1/kb/team/documents/upload:todo.txt", headers=auth("bob"))
        assert theirs.status_code == 404
        assert _owners(service, "team") == {"upload:notes.md": {"alice"},
                                            "upload:todo.txt": {"alice"}}


@pytest.mark.parametrize(("body", "message"), [
    ({"documents": [{"name": "../etc/passwd", "text": "x"}]}, "relative path"),
    ({"documents": [{"name": "deck.pdf", "text": "x"}]}, "text documents are"),
    ({"documents": [{"name": ".hidden", "text": "x"}]}, "not starting with '.'"),
    ({"documents": [{"name": "/etc/passwd.md", "text": "x"}]}, "relative path"),
    ({"documents": [{"name": f"n{i}", "text": "x"} for i in range(101)]}, "documents"),
    ({"documents": []}, "documents"),
])
def test_bad_documents_are_refused(served: tuple[str, Service], body: dict[str, object],
                                   message: str) -> None:
    url, _ = served
    answer = httpx.post(f"{url}/v1/kb/team/documents", json=body, headers=auth("alice"),
                        timeout=60)
    assert answer.status_code == 422, answer.text
    assert message in answer.json()["error"]["message"]


def test_uploads_need_a_key_and_json(served: tuple[str, Service]) -> None:
    url, _ = served
    anonymous = httpx.post(f"{url}/v1/kb/team/documents", json={"documents": []}, timeout=60)
    assert anonymous.status_code == 401
    form = httpx.post(f"{url}/v1/kb/team/documents", files={"f": ("a.txt", b"x")},
                      headers=auth("alice"), timeout=60)
    assert form.status_code == 415
    bad_collection = httpx.post(f"{url}/v1/kb/eval-x/documents", headers=auth("alice"),
                                json={"documents": [{"name": "a", "text": "x"}]}, timeout=60)
    assert bad_collection.status_code == 422 and "reserved" in bad_collection.text


def test_a_path_outside_the_collection_is_just_a_name(served: tuple[str, Service]) -> None:
    url, _ = served
    answer = httpx.delete(f"{url}/v1/kb/team/documents/..%2F..%2Fetc%2Fpasswd",
                          headers=auth("alice"), timeout=60)
    assert answer.status_code == 404


def _cli(service: Service, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """``agent-search ARGS`` as alice, in the served project (its source root)."""
    home = service.searcher.config.home
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    monkeypatch.setenv("MY_KEY", KEYS["alice"])
    return runner.invoke(app, [*args, "--api-key-env", "MY_KEY",
                               "--config", str(home.parent / "config")])


def test_the_cli_sends_the_work_to_the_server(served: tuple[str, Service],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    url, service = served
    folder = service.searcher.config.home.parent / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "bikes.md").write_text("# Bikes\n\nLube the chain every 300 km.\n")
    (folder / "sub" / "bikes.md").write_text("# Old bikes\n\nSteel frames rust.\n")
    (folder / "data.jsonl").write_text("{}\n")
    out = _cli(service, monkeypatch, "kb", "ingest", str(folder), "-c", "cli",
               "--server", url, "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["documents"] == 2 and report["added"] >= 2 and report["missing"] == []
    assert "--server takes" in report["skipped"][0]["reason"]
    assert "agent-search: sending: " in out.stderr  # progress, as a local ingest shows it
    assert _owners(service, "cli") == {"upload:notes/bikes.md": {"alice"},
                                       "upload:notes/sub/bikes.md": {"alice"}}
    listed = _cli(service, monkeypatch, "kb", "list", "cli", "--server", url)
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.split()[:6] == ["upload:notes/bikes.md", "1", "chunk", "owner",
                                         "alice,", "team"]
    gone = _cli(service, monkeypatch, "kb", "rm", str(folder / "bikes.md"), "-c", "cli",
                "--server", url)
    assert gone.exit_code == 0, gone.output
    assert "removed upload:notes/bikes.md" in gone.stdout
    again = _cli(service, monkeypatch, "kb", "rm", "upload:notes/bikes.md", "-c", "cli",
                 "--server", url)
    assert again.exit_code == 1 and "404" in again.stderr
    theirs = _cli(service, monkeypatch, "kb", "rm", "upload:notes/sub/bikes.md", "-c", "cli",
                  "--server", url, "--user", "bob")
    assert theirs.exit_code == 2 and "the API key decides" in theirs.stderr


def test_a_folder_sent_to_the_server_is_mirrored(served: tuple[str, Service],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    url, service = served
    folder = service.searcher.config.home.parent / "diary"
    (folder / "week").mkdir(parents=True)
    for name in ("mon.md", "tue.md", "week/wed.txt"):
        (folder / name).write_text(f"# {name}\n\nRode to work on {name}.\n")
    ingest = ("kb", "ingest", str(folder), "-c", "mirror", "--server", url)
    assert _cli(service, monkeypatch, *ingest).exit_code == 0
    (folder / "tue.md").unlink()
    (folder / "week" / "wed.txt").unlink()
    kept = _cli(service, monkeypatch, *ingest, "--keep-missing", "--json")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.stdout)["missing"] == []
    assert len(_owners(service, "mirror")) == 3
    out = _cli(service, monkeypatch, *ingest)
    assert out.exit_code == 0, out.output
    assert "unchanged 1, removed 2" in out.stdout
    assert "removed upload:diary/tue.md: the file is gone" in out.stdout
    assert "removed upload:diary/week/wed.txt: the file is gone" in out.stdout
    assert _owners(service, "mirror") == {"upload:diary/mon.md": {"alice"}}
    again = _cli(service, monkeypatch, *ingest, "--json")
    assert json.loads(again.stdout)["missing"] == [] and json.loads(again.stdout)["removed"] == 0


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


def test_a_file_name_the_server_refuses_is_reported_not_sent(tmp_path: Path) -> None:
    """A name that is not UTF-8 (or otherwise refused) is skipped with the reason and left
    out of the folder's file list (it cannot be encoded, and never was a document)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "good.md").write_text("fine")
    bad = Path(bytes(folder / "caf").decode() + b"\xe9.md".decode("utf-8", "surrogateescape"))
    bad.write_text("x")
    out = documents_of([folder], tmp_path)
    assert [name for name, _ in out.docs] == ["notes/good.md"]
    assert out.folders == [("notes", ["good.md"])]
    assert [s.source for s in out.skipped] == [str(folder / "caf\\xe9.md")]
    json.dumps([s.source for s in out.skipped])  # printable as --json prints it
