"""Files uploaded to a collection while the service runs (issue 24 item 3):
``POST /v1/kb/{collection}/files`` takes multipart file parts, parses office and PDF files
in the ingest's sandbox, and the caller's key owns what it adds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import docx
import httpx
import pytest
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search.cli.app import app
from agent_search.kb import CollectionNotFound, list_documents
from agent_search.server import Service
from tests.support.http_service import KEYS, auth, serve_with_kb, write_project

runner = CliRunner()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-files")
    cdir, adir = write_project(root)
    yield from serve_with_kb(root, cdir, adir)


def _docs(service: Service, collection: str) -> dict[str, dict[str, object]]:
    docs = anyio.run(lambda: list_documents(service.searcher.config, collection))
    return {f"{d['source']}@{d['owner']}": d for d in docs}


def _docx(path: Path) -> bytes:
    d = docx.Document()
    d.add_heading("Honey bees", 0)
    d.add_paragraph("Bees live in colonies and make honey from nectar.")
    d.save(str(path))
    return path.read_bytes()


def test_files_are_parsed_and_owned_by_the_caller(served: tuple[str, Service],
                                                  tmp_path: Path) -> None:
    url, service = served
    files = [("file", ("bees.docx", _docx(tmp_path / "bees.docx"),
                       "application/vnd.openxmlformats-officedocument."
                       "wordprocessingml.document")),
             ("file", ("notes.md", b"# Bikes\n\nLube the chain every 300 km.\n",
                       "text/markdown")),
             ("file", ("broken.pdf", b"%PDF-1.4 this is not really a pdf",
                       "application/pdf"))]
    with httpx.Client(base_url=url, timeout=120) as client:
        added = client.post("/v1/kb/up/files", files=files, headers=auth("alice"))
        assert added.status_code == 200, added.text
        report = added.json()
        assert report["documents"] == 2 and report["added"] >= 2
        (skipped,) = report["skipped"]
        assert skipped["source"] == "upload:broken.pdf" and "cannot parse" in skipped["reason"]
        docs = _docs(service, "up")
        assert set(docs) == {"upload:bees.docx@alice", "upload:notes.md@alice"}
        assert docs["upload:bees.docx@alice"]["team"] == "t1"

        again = client.post("/v1/kb/up/files", files=files[:2], headers=auth("alice"))
        assert again.json()["added"] == 0 and again.json()["unchanged"] == 2
        bob = client.post("/v1/kb/up/files", headers=auth("bob"),
                          files=[("file", ("notes.md", b"Wasps sting.", "text/plain"))])
        assert bob.status_code == 200, bob.text
        assert "upload:notes.md@bob" in _docs(service, "up")


def test_refused_uploads_write_nothing(served: tuple[str, Service]) -> None:
    url, service = served
    files = [("file", ("good.md", b"# Good\n\nfine text\n", "text/markdown")),
             ("file", ("evil.exe", b"MZ\x90\x00", "application/octet-stream"))]
    answer = httpx.post(f"{url}/v1/kb/refused/files", files=files, headers=auth("alice"),
                        timeout=60)
    assert answer.status_code == 415, answer.text
    assert "evil.exe" in answer.json()["error"]["message"]
    with pytest.raises(CollectionNotFound):
        _docs(service, "refused")


def test_the_cli_sends_parsed_files_as_uploads(served: tuple[str, Service],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url, service = served
    home = service.searcher.config.home
    folder = home.parent / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "bikes.md").write_text("# Bikes\n\nLube the chain every 300 km.\n")
    _docx(folder / "sub" / "bees.docx")
    monkeypatch.setenv("MY_KEY", KEYS["alice"])
    monkeypatch.setenv("AGENT_SEARCH_HOME", str(home))
    ingest = ["kb", "ingest", str(folder), "-c", "cli-files", "--server", url,
              "--api-key-env", "MY_KEY", "--config", str(home.parent / "config"), "--json"]
    out = runner.invoke(app, ingest)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["documents"] == 2 and report["skipped"] == []
    assert set(_docs(service, "cli-files")) == {"upload:notes/bikes.md@alice",
                                                "upload:notes/sub/bees.docx@alice"}
    (folder / "sub" / "bees.docx").unlink()  # a parsed file's document is mirrored away too
    again = json.loads(runner.invoke(app, ingest).stdout)
    assert again["missing"] == ["upload:notes/sub/bees.docx"]
    assert set(_docs(service, "cli-files")) == {"upload:notes/bikes.md@alice"}


def _events(text: str) -> list[tuple[str, dict[str, object]]]:
    out = []
    for frame in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines()
                     if line and not line.startswith(":"))
        if "data" in lines:
            out.append((lines.get("event", "message"), json.loads(lines["data"])))
    return out


def test_progress_is_streamed_then_the_report(served: tuple[str, Service],
                                              tmp_path: Path) -> None:
    url, service = served
    files = [("file", ("bees.docx", _docx(tmp_path / "bees.docx"), "application/zip")),
             ("file", ("long.md", b"# Long\n\n" + b"Bees dance to show the way. " * 2000,
                       "text/markdown"))]
    answer = httpx.post(f"{url}/v1/kb/progress/files?progress=true", files=files,
                        headers=auth("alice"), timeout=120)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = _events(answer.text)
    names = [name for name, _ in events]
    assert names[-1] == "report" and set(names[:-1]) == {"progress"}, names
    last = events[-2][1]
    assert last["done"] == last["total"] and isinstance(last["total"], int) \
        and last["total"] > 50_000
    assert events[-1][1]["documents"] == 2
    assert set(_docs(service, "progress")) == {"upload:bees.docx@alice",
                                               "upload:long.md@alice"}


def test_every_progress_step_is_an_event_however_fast_the_ingest(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A page read by OCR is one progress step: steps that come faster than the stream's
    batches are all written, in order (sampling only the newest lost pages)."""
    from agent_search.config import SearchConfig
    from agent_search.server import _kb_files

    class Report:
        def to_json(self) -> dict[str, int]:
            return {"documents": 1}

    async def ingest(config: object, collection: str, uploads: object, access: object,
                     progress: Callable[[int, int], None], *rest: object) -> Report:
        for page in range(5):
            progress(page * 10, 50)
        progress(50, 50)
        return Report()

    monkeypatch.setattr(_kb_files, "ingest_files", ingest)
    written: list[bytes] = []

    async def write(data: bytes) -> None:
        written.append(data)

    produce = _kb_files.progress_events(SearchConfig(home=tmp_path), "c", [], None,  # type: ignore[arg-type]
                                        every=10.0)
    anyio.run(produce, write)
    events = _events(b"".join(written).decode())
    assert [data["done"] for name, data in events if name == "progress"] == [0, 10, 20, 30, 40,
                                                                           50]
    assert events[-1] == ("report", {"documents": 1})
