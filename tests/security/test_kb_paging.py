"""Listings are paged (issue 33 item 3): ``GET /v1/kb/{collection}/documents`` returned
every document the caller may read in one answer, whatever the collection's size, and
search records could not be listed at all. Now both answer at most ``limit`` (≤ 1000)
items and an opaque ``next_cursor``, and a cursor cannot be forged to cross tenants or
collections: one made for another caller or another collection, or edited, is refused
(422 naming ``cursor``), and whatever a cursor says, a page holds only what the caller
may read."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_search._paging import make_cursor
from agent_search.agent.records import SearchRecord
from agent_search.server import Service
from agent_search.server._records import SharedRecordStore

from ..support.http_service import auth, serve_with_kb, two_tenant_keys, write_project

ALICE = {f"a{i}.md" for i in range(7)}
BOB = {"b0.md", "b1.md", "b2.md"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-paging")
    cdir, adir = write_project(root, server={"api_keys": two_tenant_keys()})
    for url, service in serve_with_kb(root, cdir, adir):
        for who, names, collection in (("alice", ALICE, "team"), ("bob", BOB, "team"),
                                       ("alice", {"o0.md", "o1.md"}, "other")):
            body = {"documents": [{"name": n, "text": f"# {n}\n\nA note on {n}.\n"}
                                  for n in sorted(names)]}
            answer = httpx.post(f"{url}/v1/kb/{collection}/documents", json=body,
                                headers=auth(who), timeout=300)
            assert answer.status_code == 200, answer.text
        yield url, service


def _get(url: str, path: str, who: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{url}{path}", params=params, headers=auth(who), timeout=60)


def _pages(url: str, path: str, who: str, key: str, limit: int) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        answer = _get(url, path, who, **params)
        assert answer.status_code == 200, answer.text
        pages.append(answer.json()[key])
        cursor = answer.json()["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 50


def test_documents_come_in_bounded_pages(served: tuple[str, Service]) -> None:
    url, _ = served
    pages = _pages(url, "/v1/kb/team/documents", "alice", "documents", 3)
    assert [len(p) for p in pages] == [3, 3, 1]  # alice reads her own 7, not bob's
    sources = [d["source"] for p in pages for d in p]
    assert sorted(sources) == sorted(f"upload:{n}" for n in ALICE)  # each once
    assert all(d["chunks"] == 1 for p in pages for d in p)
    whole = _get(url, "/v1/kb/team/documents", "bob").json()
    assert {d["source"] for d in whole["documents"]} == {f"upload:{n}" for n in BOB}
    assert whole["next_cursor"] is None
    for bad in (0, 1001, -1):
        refused = _get(url, "/v1/kb/team/documents", "alice", limit=bad)
        assert refused.status_code == 422, refused.text
        assert "limit" in refused.text


def _cursor(url: str, collection: str, who: str) -> str:
    first = _get(url, f"/v1/kb/{collection}/documents", who, limit=1).json()
    assert first["next_cursor"]
    return str(first["next_cursor"])


def test_a_cursor_cannot_cross_tenants_or_collections(served: tuple[str, Service]) -> None:
    url, _ = served
    alices = _cursor(url, "team", "alice")
    for who, collection in (("bob", "team"), ("alice", "other"), ("bob", "other")):
        answer = _get(url, f"/v1/kb/{collection}/documents", who, limit=5, cursor=alices)
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["param"] == "cursor" and "not a cursor of this listing" in \
            error["message"]
        assert "upload:a" not in answer.text
    # bob makes a cursor of his own listing that starts at one of alice's documents:
    # accepted (it is his listing), and still only his documents come back
    # (alice's cursor holds the offset of her second document: it is base64 JSON)
    offset = json.loads(base64.urlsafe_b64decode(alices + "==="))["p"]["offset"]
    crafted = make_cursor(("kb-documents", "team", "bob", "t2"), {"offset": offset})
    page = _get(url, "/v1/kb/team/documents", "bob", limit=10, cursor=crafted)
    assert page.status_code == 200, page.text
    assert {d["source"] for d in page.json()["documents"]} <= {f"upload:{n}" for n in BOB}
    # and a cursor claiming alice's listing, sent by bob, is refused
    claimed = make_cursor(("kb-documents", "team", "alice", "t1"), {"offset": offset})
    assert _get(url, "/v1/kb/team/documents", "bob", cursor=claimed).status_code == 422


@settings(max_examples=40, deadline=None)
@given(cursor=st.one_of(
    st.text(max_size=80),
    st.builds(lambda o: make_cursor(("kb-documents", "team", "bob", "t2"), {"offset": o}),
              st.one_of(st.text(max_size=30), st.integers(), st.none(),
                        st.just("1" * 25), st.just(str(1 << 63))))))
def test_forged_cursors_are_refused_or_stay_in_the_callers_listing(
        served: tuple[str, Service], cursor: str) -> None:
    url, _ = served
    answer = _get(url, "/v1/kb/team/documents", "bob", limit=10, cursor=cursor)
    assert answer.status_code in (200, 422), answer.text
    if answer.status_code == 200:
        assert {d["source"] for d in answer.json()["documents"]} <= \
            {f"upload:{n}" for n in BOB}
    else:
        assert answer.json()["error"]["param"] == "cursor"


def test_records_are_listed_by_their_owner_in_pages(served: tuple[str, Service]) -> None:
    url, service = served

    async def seed() -> None:
        store = SharedRecordStore(service.records.url)
        for i in range(5):
            rid = f"ra{i}"
            store.expect(rid, "alice\x1ft1")
            # two records of one instant: the cursor orders ties by id
            await store.save(SearchRecord(request_id=rid, assistant="offline",
                                          query="secret of alice", created_at=100.0 + i // 2))
        store.expect("rb0", "bob\x1ft2")
        await store.save(SearchRecord(request_id="rb0", assistant="offline",
                                      query="bob's", created_at=50.0))
        await store.aclose()

    anyio.run(seed)
    pages = _pages(url, "/v1/records", "alice", "records", 2)
    ids = [r["request_id"] for p in pages for r in p]
    assert ids == ["ra4", "ra3", "ra2", "ra1", "ra0"]  # newest first, each once
    assert [len(p) for p in pages][:2] == [2, 2]
    bobs = _get(url, "/v1/records", "bob").json()
    assert [r["request_id"] for r in bobs["records"]] == ["rb0"]
    alices = _get(url, "/v1/records", "alice", limit=2).json()["next_cursor"]
    stolen = _get(url, "/v1/records", "bob", cursor=alices)
    assert stolen.status_code == 422 and stolen.json()["error"]["param"] == "cursor"
    assert "ra3" not in stolen.text and "secret" not in stolen.text
    assert _get(url, "/v1/records", "bob", limit=5000).status_code == 422
