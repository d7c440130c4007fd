"""Every name a caller or a config sends is checked by a full match: Python's ``$``
matches before a final newline, so ``^name$`` with ``re.match`` let ``docs\\n`` through as
a collection name (a second collection beside ``docs``), and likewise a request id, a
file or folder name, a function name, a site filter or a key's digest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agent_search.kb import check_collection_name
from agent_search.kb._uploads import check_folder
from agent_search.server._errors import ApiError
from agent_search.server._kb_files import FILES_PATH, check_file_name
from agent_search.server.settings import ApiKeyEntry
from agent_search.textsearch.request_filters import FilterError, _check_site

from ..support.http_service import auth, in_process_app


def _key(digest: str) -> Any:
    return ApiKeyEntry(sha256=digest, user_id="u")


VALIDATORS: list[tuple[str, Callable[[str], Any], str, type[Exception]]] = [
    ("collection", check_collection_name, "docs", ValueError),
    ("folder", check_folder, "notes", ValueError),
    ("file name", check_file_name, "deploy.md", ApiError),
    ("key digest", _key, "a" * 64, ValueError),
]


@pytest.mark.parametrize(("what", "check", "good", "error"), VALIDATORS,
                         ids=[v[0] for v in VALIDATORS])
@pytest.mark.parametrize("tail", ["\n", "\r\n", "\x00"])
def test_a_trailing_newline_is_refused(what: str, check: Callable[[str], Any], good: str,
                                       error: type[Exception], tail: str) -> None:
    check(good)  # the name itself is fine
    with pytest.raises(error):
        check(good + tail)


def test_a_site_filter_is_a_full_match() -> None:
    # the filter strips surrounding blanks first; an inner line break is not a host
    with pytest.raises(FilterError):
        _check_site("example.com\nOR site:evil.com")


def test_the_upload_route_test_is_a_full_match() -> None:
    assert FILES_PATH.fullmatch("/v1/kb/docs/files")
    assert not FILES_PATH.fullmatch("/v1/kb/docs/files\n")


def test_no_collection_named_with_a_newline_over_http(tmp_path: Path) -> None:
    app, _ = in_process_app(tmp_path)
    with TestClient(app) as client:
        r = client.post("/v1/kb/docs%0A/documents", headers=auth("alice"),
                        json={"documents": [{"name": "a.md", "text": "# A\n\nBees."}]})
        assert r.status_code == 422, r.text
        assert "collection" in r.text
        listed = client.get("/v1/kb/docs%0A/documents", headers=auth("alice"))
        assert listed.status_code == 422, listed.text
        record = client.get("/v1/records/abc%0A", headers=auth("alice"))
        assert record.status_code == 422, record.text
