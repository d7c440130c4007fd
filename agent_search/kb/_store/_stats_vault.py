"""Where a collection's statistics are kept: next to the shard (embedded store) or in a
sibling collection on the Qdrant server (``kb.url``), so every process that uses the
server reads the same statistics (issue 33: the server path had none).

A vault holds records (the head and the blocks of :mod:`agent_search.kb._store._stats_state`,
each the bytes of a numpy ``.npz``, never a pickle) and *writing markers*: a writer puts
its marker before it writes the first point of a session and takes it away once the
statistics are saved after its last, so a marker that outlives its writer (a crash, a
killed process) says the saved statistics may not be those of the points. On the
embedded store only one process writes (the data home's lock), so a marker this process
did not make is always such a leftover; on a server, other processes may be writing, so a
marker is taken as a leftover once it is :data:`MARKER_TTL` seconds old (a writer renews
its own every :data:`HEARTBEAT` seconds while it writes).
"""

from __future__ import annotations

import base64
import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

MARKER_TTL = 300.0
HEARTBEAT = 30.0
SIBLING_PREFIX = "_stats."
"""The statistics of server collection ``c`` live in ``_stats.c`` (a kb collection's name
starts with a letter or digit, so no kb collection is ever named so)."""
_PART = 4_000_000  # bytes of a record per server point (requests stay far under 32 MB)
_NS = uuid.UUID("5c7a0f0e-6a55-4c8e-9a31-6b1f4d2e8a10")


@dataclass(frozen=True, slots=True)
class Marker:
    token: str
    age: float  # seconds since it was put or renewed


class StatsVault(Protocol):
    """Records and writing markers of one collection's statistics."""

    shared: bool  # other processes may write the collection (a server)

    def read(self) -> tuple[bytes, dict[int, bytes]] | None: ...
    def generation(self) -> int | None: ...
    def save(self, generation: int, head: bytes, blocks: dict[int, bytes]) -> None: ...
    def markers(self) -> list[Marker]: ...
    def live(self, marker: Marker) -> bool: ...
    def mark(self, token: str) -> None: ...
    def unmark(self, tokens: list[str]) -> None: ...
    def drop(self) -> None: ...


class FileVault:
    """``<collection>/stats/``: ``head.npz``, ``block-N.npz`` and ``writing-TOKEN``
    markers. Records are replaced atomically (written aside, renamed, synced), the head
    last."""

    shared = False

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "stats"
        self._mine: set[str] = set()
        self._generation: int | None = None
        self._known = False

    def read(self) -> tuple[bytes, dict[int, bytes]] | None:
        head = self.folder / "head.npz"
        if not head.is_file():
            return None
        blocks = {int(p.stem.split("-", 1)[1]): p.read_bytes()
                  for p in self.folder.glob("block-*.npz") if p.stem.split("-", 1)[1].isdigit()}
        return head.read_bytes(), blocks

    def generation(self) -> int | None:
        if not self._known:
            from agent_search.kb._store._stats_state import StateError, head_generation

            head = self.folder / "head.npz"
            try:
                self._generation = head_generation(head.read_bytes()) if head.is_file() \
                    else None
            except (OSError, StateError):
                self._generation = None
            self._known = True
        return self._generation

    def save(self, generation: int, head: bytes, blocks: dict[int, bytes]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        for b, raw in sorted(blocks.items()):
            _write(self.folder / f"block-{b}.npz", raw)
        _write(self.folder / "head.npz", head)
        self._generation, self._known = generation, True
        for legacy in ("stats.npz", "stats.dirty"):  # the single-file layout before
            (self.folder.parent / legacy).unlink(missing_ok=True)

    def markers(self) -> list[Marker]:
        now = time.time()
        out = []
        for p in self.folder.glob("writing-*"):
            with contextlib.suppress(OSError):
                out.append(Marker(p.name.split("-", 1)[1], now - p.stat().st_mtime))
        return out

    def live(self, marker: Marker) -> bool:
        return marker.token in self._mine

    def mark(self, token: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"writing-{token}"
        with open(path, "w", encoding="utf-8") as fh:
            fh.flush()
            os.fsync(fh.fileno())
        self._mine.add(token)

    def unmark(self, tokens: list[str]) -> None:
        for token in tokens:
            (self.folder / f"writing-{token}").unlink(missing_ok=True)
            self._mine.discard(token)

    def drop(self) -> None:
        self._known, self._generation = False, None


def _write(path: Path, raw: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


class ServerVault:
    """The sibling collection ``_stats.<name>`` on the server: points without vectors,
    a record in parts of at most 4 MB (base64 in the payload), each part tagged with the
    generation it was saved at; markers are points too."""

    shared = True

    def __init__(self, client: QdrantClient, name: str) -> None:
        self.client = client
        self.name = SIBLING_PREFIX + name
        self._exists = False

    def _ensure(self) -> None:
        if not self._exists:
            if not self.client.collection_exists(self.name):
                self.client.create_collection(self.name, vectors_config={})
            self._exists = True

    def _points(self, kind: str, payload: bool | list[str] = True) -> list[Any]:
        from qdrant_client import models

        if not self.client.collection_exists(self.name):
            return []
        flt = models.Filter(must=[models.FieldCondition(
            key="kind", match=models.MatchValue(value=kind))])
        out: list[Any] = []
        offset: Any = None
        while True:
            page, offset = self.client.scroll(self.name, scroll_filter=flt, limit=64,
                                              offset=offset, with_payload=payload,
                                              with_vectors=False)
            out.extend(page)
            if offset is None:
                return out

    def read(self) -> tuple[bytes, dict[int, bytes]] | None:
        parts: dict[str, dict[int, dict[int, str]]] = {}  # key → generation → part → data
        counts: dict[tuple[str, int], int] = {}
        for p in self._points("data"):
            pl = p.payload or {}
            key, gen = str(pl.get("key")), int(pl.get("generation", -1))
            parts.setdefault(key, {}).setdefault(gen, {})[int(pl.get("part", 0))] = \
                str(pl.get("data", ""))
            counts[(key, gen)] = int(pl.get("parts", 1))
        records: dict[str, bytes] = {}
        for key, by_gen in parts.items():
            for gen in sorted(by_gen, reverse=True):  # the newest complete save
                got = by_gen[gen]
                if len(got) == counts[(key, gen)]:
                    records[key] = b"".join(base64.b64decode(got[i]) for i in sorted(got))
                    break
            else:
                from agent_search.kb._store._stats_state import StateError

                raise StateError(f"statistics record {key} is being saved")
        head = records.pop("head", None)
        if head is None:
            return None
        return head, {int(k.split("-", 1)[1]): v for k, v in records.items()
                      if k.startswith("block-")}

    def generation(self) -> int | None:
        if not self.client.collection_exists(self.name):
            return None
        found = self.client.retrieve(self.name, [_part_id("head", 0)],
                                     with_payload=["generation"])
        return int((found[0].payload or {}).get("generation", 0)) if found else None

    def save(self, generation: int, head: bytes, blocks: dict[int, bytes]) -> None:
        from qdrant_client import models

        self._ensure()
        records = [(f"block-{b}", raw) for b, raw in sorted(blocks.items())]
        for key, raw in [*records, ("head", head)]:  # the head last
            chunks = [raw[i:i + _PART] for i in range(0, len(raw), _PART)] or [b""]
            for i, chunk in enumerate(chunks):
                self.client.upsert(self.name, points=[models.PointStruct(
                    id=_part_id(key, i), vector={}, payload={
                        "kind": "data", "key": key, "part": i, "parts": len(chunks),
                        "generation": generation,
                        "data": base64.b64encode(chunk).decode("ascii")})], wait=True)

    def markers(self) -> list[Marker]:
        now = time.time()
        return [Marker(str((p.payload or {}).get("token")),
                       now - float((p.payload or {}).get("time", 0.0)))
                for p in self._points("writing")]

    def live(self, marker: Marker) -> bool:
        return marker.age < MARKER_TTL

    def mark(self, token: str) -> None:
        from qdrant_client import models

        self._ensure()
        self.client.upsert(self.name, points=[models.PointStruct(
            id=str(uuid.uuid5(_NS, f"writing/{token}")), vector={},
            payload={"kind": "writing", "token": token, "time": time.time()})], wait=True)

    def unmark(self, tokens: list[str]) -> None:
        from qdrant_client import models

        if tokens and self.client.collection_exists(self.name):
            self.client.delete(self.name, points_selector=models.PointIdsList(points=[
                str(uuid.uuid5(_NS, f"writing/{t}")) for t in tokens]), wait=True)

    def drop(self) -> None:
        if self.client.collection_exists(self.name):
            self.client.delete_collection(self.name)
        self._exists = False


def _part_id(key: str, part: int) -> str:
    return str(uuid.uuid5(_NS, f"{key}/{part}"))
