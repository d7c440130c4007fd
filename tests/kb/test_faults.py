"""Faults: a store locked by another process, a corrupt store, a model or dimension
mismatch, concurrent ingest and search, server-mode client construction."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_search import Context, Request, SearchConfig, Searcher
from agent_search.embedding import EmbeddingError
from agent_search.kb import (
    CollectionMismatchError,
    StoreError,
    StoreLockedError,
    close_stores,
    create_handler,
    ingest_paths,
    list_collections,
)
from agent_search.kb._store import edge_root, get_store
from agent_search.kb._store._server import ServerStore, server_client
from agent_search.kb.settings import KBSettings

pytestmark = pytest.mark.anyio


async def _search(config: SearchConfig, query: str, **fields: Any):  # type: ignore[no-untyped-def]
    return await create_handler(config).search(
        Context(config=config), Request(type="kb", query=query, limit=5, **fields))


_HOLD = ("import sys\nfrom pathlib import Path\nfrom agent_search.kb.settings import KBSettings\n"
         "from agent_search.kb._store._open import get_store\n"
         "get_store(KBSettings(), Path(sys.argv[1]))\nprint('ready', flush=True)\n"
         "sys.stdin.read()")


def test_store_locked_by_another_process(home: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(home)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        with pytest.raises(StoreLockedError, match=f"open in another process \\(pid "
                                                   f"{holder.pid}\\)"):
            get_store(KBSettings(), home)
        assert time.perf_counter() - started < 5.0  # at once: no waiting for the lock
        config = SearchConfig(home=home)
        result = anyio.run(lambda: _search(config, "anything"))
        assert result.error is not None and "another process" in result.error
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert get_store(KBSettings(), home).collections() == []  # free again: it opens


async def test_corrupt_collection_is_a_clear_error(config: SearchConfig, docs: Path) -> None:
    await ingest_paths(config, [docs], "docs")
    close_stores()
    (edge_root(config.home) / "docs" / "collection.json").write_text("{not json")
    result = await _search(config, "x")
    assert result.error is not None and "corrupt or unreadable" in result.error
    assert "collection.json" in result.error and "\n" not in result.error


async def test_a_creation_that_did_not_finish_is_cleared(config: SearchConfig,
                                                         docs: Path) -> None:
    torn = edge_root(config.home) / "docs"
    (torn / "shard").mkdir(parents=True)  # killed between the shard and collection.json
    assert (await list_collections(config)) == []
    report = await ingest_paths(config, [docs], "docs")
    assert report.added == report.chunks > 0
    assert {r["name"] for r in await list_collections(config)} == {"docs"}


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
def test_server_mode_builds_a_remote_client(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qdrant_client.qdrant_remote import QdrantRemote

    monkeypatch.setenv("KB_KEY", "secret")
    store = get_store(KBSettings(url="http://127.0.0.1:6333", api_key_env="KB_KEY"), home)
    assert isinstance(store, ServerStore)
    client = store.client
    assert isinstance(client._client, QdrantRemote)
    assert client._client._host == "127.0.0.1" and client._client._api_key == "secret"
    assert not (home / "kb").exists()  # nothing local is created
    close_stores()
    monkeypatch.delenv("KB_KEY")
    with pytest.raises(StoreError, match="KB_KEY is not set"):
        server_client(KBSettings(url="http://127.0.0.1:6333", api_key_env="KB_KEY"))


class _Embeddings(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible /v1/embeddings: bag-of-hashed-words vectors."""

    dims = 8

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = []
        for i, text in enumerate(body["input"]):
            vec = [0.0] * self.dims
            for word in text.lower().split():
                vec[zlib.crc32(word.encode()) % self.dims] += 1.0
            data.append({"index": i, "embedding": vec, "object": "embedding"})
        out = json.dumps({"data": data, "model": body["model"], "object": "list"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def embeddings_server() -> Iterator[tuple[str, type[_Embeddings]]]:
    handler = type("Handler", (_Embeddings,), {"dims": 8})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()


async def test_openai_provider_and_model_mismatch(
        home: Path, docs: Path, embeddings_server: tuple[str, type[_Embeddings]]) -> None:
    url, handler = embeddings_server
    remote = SearchConfig(home=home, kb={"embedding_provider": "openai", "embedding_url": url,
                                         "embedding_model": "toy"})
    report = await ingest_paths(remote, [docs], "toy")
    assert report.embedded == report.chunks > 0
    rows = {r["name"]: r for r in await list_collections(remote)}
    assert rows["toy"]["dimensions"] == 8 and rows["toy"]["embedding_model"] == "openai:toy"
    found = await _search(remote, "spaghetti pasta water", options={"mode": "dense"})
    assert found.error is None and found.items

    local = SearchConfig(home=home)  # settings name the offline MiniLM: 384-d, another model
    with pytest.raises(CollectionMismatchError, match="embedding model"):
        await ingest_paths(local, [docs], "toy")
    await ingest_paths(local, [docs / "bees.html"], "minilm")
    # a search embeds the query with each collection's own model, once per model
    searcher = Searcher(local)
    searcher.registry.register(create_handler(local))
    ctx = searcher.context()
    both = await searcher.search(
        Request(type="kb", query="honey bees waggle dance", collections=["toy", "minilm"],
                limit=10, min_score=0), ctx=ctx)  # the toy model's scores mean nothing
    assert both.error is None and {i.collection for i in both.items} == {"toy", "minilm"}
    assert {n.attributes["model"] for n in ctx.trace.find("embedding")} == {
        "openai:toy", "sentence-transformers/all-MiniLM-L6-v2@int8dyn-256"}

    handler.dims = 16  # the endpoint now answers with other vectors for the same model
    (docs / "new.txt").write_text("A brand new document about tea.")
    with pytest.raises(EmbeddingError, match="16-d vectors, expected 8"):
        await ingest_paths(remote, [docs / "new.txt"], "toy")
    assert {r["name"]: r["points"] for r in await list_collections(remote)}["toy"] \
        == report.chunks
    mismatch = await _search(local, "tea", collections=["toy"])
    assert mismatch.error is not None and "16-d vectors, expected 8" in mismatch.error


async def test_concurrent_ingest_and_search(config: SearchConfig, docs: Path,
                                            tmp_path: Path) -> None:
    await ingest_paths(config, [docs], "live")
    more = tmp_path / "more"
    more.mkdir()
    for i in range(12):
        (more / f"note{i}.md").write_text(f"# Note {i}\n\nObservation number {i} about "
                                          f"honey bees and the waggle dance.\n")
    errors: list[str] = []
    counts: list[int] = []

    async def searches() -> None:
        for _ in range(15):
            result = await _search(config, "waggle dance", collections=["live"])
            if result.error:
                errors.append(result.error)
            counts.append(len(result.items))

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: ingest_paths(config, [more], "live"))
        tg.start_soon(lambda: ingest_paths(config, [more / "note0.md", docs], "live"))
        tg.start_soon(searches)
    assert errors == [] and all(c > 0 for c in counts)
    rows = {r["name"]: r["points"] for r in await list_collections(config)}
    again = await ingest_paths(config, [docs, more], "live")
    assert again.embedded == 0 and again.deleted == 0
    assert rows["live"] == again.chunks  # every chunk once: nothing lost, nothing doubled
    final = await _search(config, "Observation number 7", collections=["live"],
                          options={"mode": "sparse"})
    assert final.items[0].metadata["source"].endswith("note7.md")


def test_close_stores_releases_the_lock(home: Path) -> None:
    get_store(KBSettings(), home)
    close_stores()
    probe = subprocess.run([sys.executable, "-c", _HOLD, str(home)], input="",
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "ready", probe.stderr
