"""A folder sent to the service is mirrored (issue 24 items 2 and 3): ``POST
/v1/kb/{collection}/mirror`` removed nothing before (no route; a file deleted from a folder
sent with ``kb ingest --server`` stayed searchable and citable). Now it removes the
caller's documents of that folder whose file is gone — and only those: never another
tenant's, never outside the folder's own prefix (``notes`` is not ``notes2`` nor the
upload ``notes.md``), never for a folder or name that is a path trick; the names sent are
bounded and are never a path on the server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import PurePosixPath

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_search.kb import Access, check_folder, check_name, mirror_folder
from agent_search.kb._uploads import MAX_PRESENT
from agent_search.server import Service

from ..support.http_service import auth, serve_with_kb, sources_of, two_tenant_keys, write_project

BODY_CAP = 8192


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Service]]:
    root = tmp_path_factory.mktemp("kb-mirror")
    server_settings = {
        "max_body_bytes": BODY_CAP,
        "api_keys": two_tenant_keys()}
    cdir, adir = write_project(root, server=server_settings)
    (cdir / "search.yao").write_text(json.dumps({"kb": {"enabled": True},
                                                 "options": {"timeout": 30}}))
    yield from serve_with_kb(root, cdir, adir)


def _add(url: str, collection: str, names: list[str], who: str) -> None:
    body = {"documents": [{"name": n, "text": f"# {n}\n\nabout {n}\n"} for n in names]}
    answer = httpx.post(f"{url}/v1/kb/{collection}/documents", json=body,
                        headers=auth(who), timeout=120)
    assert answer.status_code == 200, answer.text


def _mirror(url: str, collection: str, folder: str, present: list[str],
            who: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/kb/{collection}/mirror", headers=auth(who), timeout=60,
                      json={"folder": folder, "present": present})


def test_a_mirror_removes_only_the_callers_gone_files_of_that_folder(
        served: tuple[str, Service]) -> None:
    url, service = served
    _add(url, "m1", ["notes/a.md", "notes/b.md", "notes/sub/d.md", "notes.md",
                     "notes2/c.md"], "alice")
    _add(url, "m1", ["notes/a.md", "notes/b.md"], "bob")
    answer = _mirror(url, "m1", "notes", ["a.md"], "alice")
    assert answer.status_code == 200, answer.text
    assert answer.json()["missing"] == ["upload:notes/b.md", "upload:notes/sub/d.md"]
    assert [d["owner"] for d in answer.json()["removed"]] == ["alice", "alice"]
    assert sources_of(service, "m1") == {
        "upload:notes/a.md@alice", "upload:notes.md@alice", "upload:notes2/c.md@alice",
        "upload:notes/a.md@bob", "upload:notes/b.md@bob"}
    # bob mirroring an empty folder of the same name removes his documents, not alice's
    theirs = _mirror(url, "m1", "notes", [], "bob")
    assert sorted(theirs.json()["missing"]) == ["upload:notes/a.md", "upload:notes/b.md"]
    assert sources_of(service, "m1") == {
        "upload:notes/a.md@alice", "upload:notes.md@alice", "upload:notes2/c.md@alice"}


@pytest.mark.parametrize("folder", [
    "..", ".", "../notes", "notes/..", "notes/../..", "/notes", "notes/", "a//b",
    "notes\\x", "no\x00tes", "no\ntes", " notes", "x" * 1025, "a/" + "y" * 256,
])
def test_a_path_trick_folder_removes_nothing(served: tuple[str, Service],
                                             folder: str) -> None:
    url, service = served
    _add(url, "m2", ["notes/a.md", "b.md"], "alice")
    before = sources_of(service, "m2")
    answer = _mirror(url, "m2", folder, [], "alice")
    assert answer.status_code == 422, answer.text
    files = httpx.post(f"{url}/v1/kb/m2/files", params={"folder": folder},
                       files=[("file", ("a.md", b"# A\n\nfine\n", "text/markdown"))],
                       headers=auth("alice"), timeout=60)
    assert files.status_code in (400, 422), files.text
    assert sources_of(service, "m2") == before


@pytest.mark.parametrize("name", [
    "notes/../../etc/passwd.md", "/etc/passwd.md", "notes//a.md", "notes/./a.md",
    "a\\b.md", "notes/.hidden.md", "notes/ a.md", "../a.md", "x" * 256 + ".md",
])
def test_a_path_trick_name_writes_nothing(served: tuple[str, Service], name: str) -> None:
    url, service = served
    answer = httpx.post(f"{url}/v1/kb/m3/documents", headers=auth("alice"), timeout=60,
                        json={"documents": [{"name": name, "text": "x"}]})
    assert answer.status_code == 422, answer.text
    assert sources_of(service, "m3") == set()


def test_the_mirror_is_bounded(served: tuple[str, Service], tmp_path: object) -> None:
    url, service = served
    _add(url, "m4", ["big/a.md"], "alice")
    many = _mirror(url, "m4", "big", [f"f{i}.md" for i in range(2000)], "alice")
    assert many.status_code == 413  # the body cap (server.max_body_bytes)
    with pytest.raises(ValueError, match="at most"):
        anyio.run(lambda: mirror_folder(service.searcher.config, "m4", "big",
                                        ["a.md"] * (MAX_PRESENT + 1),
                                        access=Access.of("alice", "t1")))
    long_name = _mirror(url, "m4", "big", ["x" * 1025], "alice")
    assert long_name.status_code == 422
    unknown = _mirror(url, "no-such-collection", "big", [], "alice")
    assert unknown.status_code == 404
    anonymous = httpx.post(f"{url}/v1/kb/m4/mirror", json={"folder": "big", "present": []},
                           timeout=60)
    assert anonymous.status_code == 401
    assert sources_of(service, "m4") == {"upload:big/a.md@alice"}


def test_a_key_lists_only_what_it_may_read(served: tuple[str, Service]) -> None:
    url, _ = served
    _add(url, "m5", ["mine/a.md"], "alice")
    _add(url, "m5", ["theirs/b.md"], "bob")
    seen = {who: [d["source"] for d in httpx.get(
        f"{url}/v1/kb/m5/documents", headers=auth(who), timeout=60).json()["documents"]]
        for who in ("alice", "bob")}
    assert seen == {"alice": ["upload:mine/a.md"], "bob": ["upload:theirs/b.md"]}
    assert httpx.get(f"{url}/v1/kb/m5/documents", timeout=60).status_code == 401


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
def test_an_accepted_name_never_leaves_its_folder(parts: list[str]) -> None:
    """Whatever is accepted is a relative path of plain parts: the server writes only
    its last part, inside a folder of its own."""
    name = "/".join(parts) + ".md"
    try:
        accepted = check_name(name)
    except ValueError:
        return
    path = PurePosixPath(accepted)
    assert not path.is_absolute() and accepted.split("/") == list(path.parts)
    assert all(p not in (".", "..") and "\\" not in p and "\x00" not in p
               for p in path.parts)
    assert not path.name.startswith(".")
    check_folder(str(path.parent)) if len(path.parts) > 1 else None
