"""File uploads to ``POST /v1/kb/{collection}/files`` (issue 24 item 3): the body cap is
the upload's own on that route only; counts, sizes, types and names are refused before
any parse and a refused request writes nothing; a cross-site form cannot upload; a caller
never removes another tenant's upload. Property: every accepted name stays a bare file
name inside the upload folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search.kb import IngestBusy, write_named
from agent_search.server import Service
from agent_search.server._errors import ApiError
from agent_search.server._kb_files import (
    FILE_SUFFIXES,
    MAX_FILES,
    check_file_name,
    error_event,
)

from ..support.http_service import auth, serve_with_kb, sources_of, two_tenant_keys, write_project

BODY_CAP = 4096
FILE_CAP = 10_000  # kb.max_file_mb = 0.01 → 10485 bytes


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-uploads")
    server_settings = {
        "max_body_bytes": BODY_CAP,
        "api_keys": two_tenant_keys()}
    cdir, adir = write_project(root, server=server_settings)
    (cdir / "search.yao").write_text(json.dumps({
        "kb": {"enabled": True, "max_file_mb": 0.01, "max_run_mb": 0.05},
        "options": {"timeout": 30}}))
    yield from serve_with_kb(root, cdir, adir)


def _post(url: str, collection: str, files: list[tuple[str, bytes]], who: str = "alice",
          headers: dict[str, str] | None = None) -> httpx.Response:
    parts = [("file", (name, data, "application/octet-stream")) for name, data in files]
    return httpx.post(f"{url}/v1/kb/{collection}/files", files=parts, timeout=60,
                      headers={**auth(who), **(headers or {})})


def _text(n: int) -> bytes:
    return (b"Bees make honey from nectar. " * (n // 29 + 1))[:n]


def test_the_upload_route_has_its_own_cap_and_only_it(served: tuple[str, Service]) -> None:
    url, service = served
    assert sources_of(service, "cap") == set()
    # three files, together far above the service's 4 KB body cap: taken on /files
    ok = _post(url, "cap", [(f"n{i}.txt", _text(8000)) for i in range(3)])
    assert ok.status_code == 200, ok.text
    assert ok.json()["documents"] == 3
    # the JSON route keeps the 4 KB cap
    big_json = httpx.post(f"{url}/v1/kb/cap/documents", headers=auth("alice"), timeout=60,
                          json={"documents": [{"name": "a.txt", "text": "x" * 8000}]})
    assert big_json.status_code == 413 and str(BODY_CAP) in big_json.text
    # and so does every other route, multipart or not
    for path in ("/v1/search", "/v1/kb/cap/documents", "/v1/kb/cap/files/x"):
        other = httpx.post(f"{url}{path}", headers=auth("alice"), timeout=60,
                           files=[("file", ("a.txt", _text(8000)))])
        assert other.status_code == 415, (path, other.text)


def test_oversize_bodies_are_refused_streamed_or_not(served: tuple[str, Service]) -> None:
    url, service = served
    declared = _post(url, "big", [(f"n{i}.txt", _text(9000)) for i in range(15)])
    assert declared.status_code == 413 and declared.json()["error"]["param"] == "body"

    boundary = "xyz"
    part = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"n.txt\"\r\nContent-Type: text/plain\r\n\r\n").encode()

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield part
        for _ in range(100):
            yield _text(4096)

    streamed = httpx.post(f"{url}/v1/kb/big/files", content=chunks(), timeout=60,
                          headers={**auth("alice"),
                                   "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert streamed.status_code == 413, streamed.text
    one_too_big = _post(url, "big", [("ok.txt", _text(100)),
                                     ("huge.txt", _text(FILE_CAP + 600))])
    assert one_too_big.status_code == 413 and "kb.max_file_mb" in one_too_big.text
    too_many = _post(url, "big", [(f"n{i}.txt", b"x") for i in range(MAX_FILES + 1)])
    assert too_many.status_code == 400, too_many.text
    assert sources_of(service, "big") == set()


@pytest.mark.parametrize(("name", "data", "status", "message"), [
    ("tool.exe", b"MZ\x90\x00", 415, "not a supported type"),
    ("report.pdf", b"<html>not a pdf</html>", 415, "not a .pdf file"),
    ("deck.pptx", b"%PDF-1.4\n", 415, "not a .pptx file"),
    ("notes.txt", b"text\x00\x01binary", 415, "binary content"),
    ("../../etc/passwd.txt", b"x", 422, "bare file name"),
    ("..\\..\\boot.md", b"x", 422, "bare file name"),
    (".bashrc.md", b"x", 422, "bare file name"),
    ("a" * 300 + ".md", b"x", 422, "bare file name"),
    ("", b"x", 422, "file"),
])
def test_wrong_types_and_hostile_names_are_refused(served: tuple[str, Service], name: str,
                                                   data: bytes, status: int,
                                                   message: str) -> None:
    url, service = served
    answer = _post(url, "hostile", [("fine.md", b"# Fine\n\nok\n"), (name, data)])
    assert answer.status_code == status, answer.text
    assert message in answer.json()["error"]["message"]
    assert sources_of(service, "hostile") == set()


def test_a_cross_site_form_cannot_upload(served: tuple[str, Service]) -> None:
    url, service = served
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Sec-Fetch-Site": "cross-site"}):
        answer = _post(url, "csrf", [("a.md", b"x")], headers=headers)
        assert answer.status_code == 403, (headers, answer.text)
    same = _post(url, "csrf", [("a.md", b"# A\n\nsame origin\n")],
                 headers={"Origin": url, "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200, same.text
    anonymous = httpx.post(f"{url}/v1/kb/csrf/files", files=[("file", ("b.md", b"x"))],
                           timeout=60)
    assert anonymous.status_code == 401
    assert sources_of(service, "csrf") == {"upload:a.md@alice"}


def test_another_tenants_upload_cannot_be_removed(served: tuple[str, Service]) -> None:
    url, service = served
    assert _post(url, "tenants", [("plan.md", b"# Plan\n\nbob's plan\n")], who="bob") \
        .status_code == 200
    theirs = httpx.delete(f"{url}/v1/kb/tenants/documents/upload:plan.md",
                          headers=auth("alice"), timeout=60)
    assert theirs.status_code == 404
    assert sources_of(service, "tenants") == {"upload:plan.md@bob"}
    mine = httpx.delete(f"{url}/v1/kb/tenants/documents/upload:plan.md",
                        headers=auth("bob"), timeout=60)
    assert mine.status_code == 200 and sources_of(service, "tenants") == set()


@given(st.text(min_size=0, max_size=220),
       st.sampled_from([*FILE_SUFFIXES, ".PDF", ".exe", "", "/..", "\\x.md"]))
def test_an_accepted_name_is_a_bare_file_name(stem: str, suffix: str) -> None:
    name = stem + suffix
    folder = Path("/uploads/tmp")
    try:
        checked = check_file_name(name)
    except ApiError as exc:
        assert exc.status in (415, 422)
        return
    path = folder / checked
    assert path.parent == folder and path.name == checked
    assert not checked.startswith(".") and path.suffix.lower() in FILE_SUFFIXES


def test_the_upload_script_sets_no_html() -> None:
    """The page's upload control shows server text (reports, refusals, names) with
    textContent only; it is a file of its own, so the page's CSP covers it."""
    static = Path(__file__).resolve().parents[2] / "agent_search" / "server" / "static"
    script = (static / "upload.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function"):
        assert sink not in script
    assert "textContent" in script
    page = (static / "index.html").read_text()
    assert '<script src="/static/upload.js" defer></script>' in page
    assert "<script>" not in page and "onclick" not in page.lower()


# -- issue 32 item 3: long UTF-8 names were a 500 (the disk's limit is 255 bytes) --------

LONG_UTF8 = "报" * 100 + ".md"  # 103 characters, 303 bytes


def test_a_name_too_long_for_the_disk_is_a_clear_422(served: tuple[str, Service]) -> None:
    url, service = served
    for progress in ("", "?progress=true"):
        parts = [("file", (LONG_UTF8, b"# Report\n\nquarterly figures\n", "text/plain"))]
        answer = httpx.post(f"{url}/v1/kb/utf8/files{progress}", files=parts, timeout=60,
                            headers=auth("alice"))
        assert answer.status_code == 422, answer.text
        assert "255 bytes" in answer.json()["error"]["message"]
    as_json = httpx.post(f"{url}/v1/kb/utf8/documents", headers=auth("alice"), timeout=60,
                         json={"documents": [{"name": LONG_UTF8, "text": "figures"}]})
    assert as_json.status_code == 422 and "255 bytes" in as_json.text, as_json.text
    nested = httpx.post(f"{url}/v1/kb/utf8/documents", headers=auth("alice"), timeout=60,
                        json={"documents": [{"name": f"{'档' * 90}/a.md", "text": "x"}]})
    assert nested.status_code == 422, nested.text
    ok = _post(url, "utf8", [("报" * 80 + ".md", b"# Report\n\nquarterly figures\n")])
    assert ok.status_code == 200, ok.text  # 243 bytes: taken
    assert sources_of(service, "utf8") == {f"upload:{'报' * 80}.md@alice"}


@given(st.text(min_size=1, max_size=120))
def test_every_accepted_name_can_be_written(tmp_path_factory: pytest.TempPathFactory,
                                            stem: str) -> None:
    folder = tmp_path_factory.mktemp("names")
    try:
        checked = check_file_name(stem + ".md")
    except ApiError as exc:
        assert exc.status == 422
        return
    with write_named(folder / checked, checked) as out:  # never an OSError
        out.write(b"x")


def test_the_progress_streams_error_event_is_a_clear_message() -> None:
    # an unexpected failure under the stream's task group came out as the text of an
    # ExceptionGroup ("unhandled errors in a TaskGroup (1 sub-exception)")
    crash = error_event(OSError(36, "File name too long"))
    assert crash["status"] == 500 and "OSError" in crash["message"]
    assert "TaskGroup" not in crash["message"] and "sub-exception" not in crash["message"]
    assert error_event(ValueError("document name 'x': bad"))["status"] == 422
    busy = error_event(IngestBusy("full", status=429))
    assert busy == {"message": "full", "status": 429}
