"""Scans uploaded over HTTP: a photo of a page and an image-only PDF are read by OCR in
the ingest's sandbox with the same limits as ``agent-search kb ingest``, a progress event
is streamed for each page, and a renamed file or an image bomb is refused."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import httpx
import pytest

from agent_search import Context, Request
from agent_search.kb import create_handler
from agent_search.kb._ingest import _ocr
from agent_search.server import Service
from tests.support.http_service import auth, serve_with_kb, write_project
from tests.support.scans import image_bytes, pdf_of_images, png_bomb, text_page


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-scans")
    cdir, adir = write_project(root)
    yield from serve_with_kb(root, cdir, adir)


def _events(text: str) -> list[tuple[str, dict[str, object]]]:
    out = []
    for frame in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines()
                     if line and not line.startswith(":"))
        if "data" in lines:
            out.append((lines.get("event", "message"), json.loads(lines["data"])))
    return out


def test_a_renamed_file_and_a_bomb_are_refused(served: tuple[str, Service]) -> None:
    url, _ = served
    with httpx.Client(base_url=url, timeout=120) as client:
        renamed = client.post("/v1/kb/scans-bad/files", headers=auth("alice"),
                              files=[("file", ("photo.png", b"%PDF-1.4 not an image",
                                               "image/png"))])
        assert renamed.status_code == 415, renamed.text
        bomb = client.post("/v1/kb/scans-bad/files", headers=auth("alice"),
                           files=[("file", ("bomb.png", png_bomb(), "image/png"))])
    assert bomb.status_code == 200, bomb.text
    (skipped,) = bomb.json()["skipped"]
    assert "kb.max_image_megapixels" in skipped["reason"]


@pytest.mark.skipif(not _ocr.available(), reason=(
    "the OCR extra is not installed (pip install 'agent-searchkit[ocr]'; make test does)"))
def test_scans_are_read_with_a_progress_event_per_page_and_found(
        served: tuple[str, Service]) -> None:
    url, service = served
    scan = pdf_of_images([text_page([["Invoices are due within thirty days."]]),
                          text_page([["Late invoices incur a two percent fee."]])])
    photo = image_bytes(text_page([["The server room door code changes monthly."]])
                        .convert("RGB"), "JPEG", quality=85)
    files = [("file", ("invoice-scan.pdf", scan, "application/pdf")),
             ("file", ("door.jpg", photo, "image/jpeg"))]
    with httpx.Client(base_url=url, timeout=300) as client:
        answer = client.post("/v1/kb/scans/files?progress=true", files=files,
                             headers=auth("alice"))
        assert answer.status_code == 200, answer.text
        events = _events(answer.text)
        assert events[-1][0] == "report" and events[-1][1]["documents"] == 2, events[-1]
        progress = [data["done"] for name, data in events if name == "progress"]
        # the PDF's two pages and the photo's one each report before they are read
        assert len(set(progress)) >= 4, progress
    # the test service has no search handlers: the kb handler over the same data
    handler = create_handler(service.searcher.config)
    found = anyio.run(lambda: handler.search(
        Context(config=service.searcher.config, user_id="alice"),
        Request(type="kb", query="what is the penalty for paying an invoice late",
                collections=["scans"], limit=3)))
    top = found.items[0]
    assert str(top.metadata["source"]).endswith("invoice-scan.pdf"), found.items
    assert top.metadata["page"] == 2 and top.metadata["extraction"] == "ocr"


def test_the_page_upload_control_accepts_every_uploaded_type() -> None:
    from importlib.resources import files

    from agent_search.server._kb_files import FILE_SUFFIXES

    page = (files("agent_search.server") / "static" / "index.html").read_text("utf-8")
    accept = page.split('accept="', 1)[1].split('"', 1)[0].split(",")
    assert set(accept) == set(FILE_SUFFIXES) and ".png" in accept
