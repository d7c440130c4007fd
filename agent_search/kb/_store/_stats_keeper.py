"""Keeping a collection's statistics up to date as its points are written: one code path
for both stores (the embedded one calls it with a :class:`FileVault`, the server one with
a :class:`ServerVault`).

A write session (the writes of one ingest or removal, up to :meth:`StatsKeeper.settle`):

1. before its first point is written, the writer's marker is put in the vault and the
   saved state is loaded (once per process: it is kept in memory afterwards);
2. each write reads back the vectors of the points it replaces or deletes (those the state
   counts: by id, never a scan) and of the points it wrote (as the engine stored them:
   Qdrant normalises a cosine vector), and takes away / adds their contributions;
3. :meth:`StatsKeeper.settle` saves the blocks the session changed and the head, then
   takes the marker away.

The statistics are therefore never taken for those of the points unless they are: a
process killed before step 3 leaves its marker, and the next reader or writer that finds a
leftover marker, no saved state, a state that disagrees with the points, or a save by
another process in between rebuilds the state from every point (a scroll, as every
ingest did before) and saves it. ``agent-search kb repair NAME`` does the same on demand.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_search.kb._store._base import KBStore, Record, scroll_all
from agent_search.kb._store._stats import CollectionStats
from agent_search.kb._store._stats_state import Repaired, StateError, StatsState, Vectors, build
from agent_search.kb._store._stats_vault import HEARTBEAT, StatsVault

RECHECK = 2.0
"""Seconds a shared vault's statistics are used before their generation is checked again
(another process may have saved since)."""


@dataclass(slots=True)
class _Entry:
    state: StatsState | None = None  # None: to be rebuilt from the points
    generation: int = 0  # of the saved state this one is
    block_gens: dict[int, int] = field(default_factory=dict)
    token: str | None = None  # this process's writing session
    marked_at: float = 0.0
    view: CollectionStats | None = None
    checked_at: float = 0.0


def _nothing() -> None:
    pass


class StatsKeeper:
    """The statistics of one store's collections (each call on a collection is made with
    that collection's lock held: calls on two collections may run at once, and touch
    only their own entries).

    The one exception: the records a plain :meth:`settle` saves are written by the
    function it returns, which the store calls after releasing its lock (their fsyncs
    took 30-60 ms a write on a busy disk, with every search waiting for the lock). Until
    that write has finished, whatever else reads or writes that collection's vault waits
    for it (:meth:`_saved`)."""

    def __init__(self, store: KBStore, vault: Callable[[str], StatsVault]) -> None:
        self.store = store
        self._vault = vault
        self._vaults: dict[str, StatsVault] = {}
        self._entries: dict[str, _Entry] = {}
        self._saving: dict[str, threading.Lock] = {}  # held while a save is written
        self._unsaved: set[str] = set()  # a save that failed: rebuild at the next session

    def _saved(self, name: str) -> None:
        """Wait until the save :meth:`settle` left to be written for ``name`` is (the
        caller holds the collection's lock, so no new one can start meanwhile)."""
        lock = self._saving.get(name)
        if lock is not None:
            with lock:
                pass

    def vault(self, name: str) -> StatsVault:
        v = self._vaults.get(name)
        if v is None:
            v = self._vaults[name] = self._vault(name)
        return v

    # -- writes ---------------------------------------------------------------------------

    def created(self, name: str, dims: int) -> None:
        """A new, empty collection: its (empty) statistics are saved at once."""
        self.forget(name)
        entry = self._entries[name] = _Entry(StatsState(dims))
        self._save(name, entry, full=True)

    def write(self, name: str, ids: list[str], write: Callable[[], object], *,
              delete: bool = False) -> None:
        """Run ``write`` (an upsert of ``ids``, or their deletion) and update the state."""
        entry = self._session(name)
        state = entry.state
        old: list[Vectors] = []
        if state is not None:
            known = [i for i in dict.fromkeys(ids) if i in state.slot_of]
            old = self._vectors(name, known)
            if len(old) != len(known):  # it counts points the store does not have
                state = entry.state = None
        try:
            write()
        except BaseException:
            entry.state = None  # what was written is not known: rebuild at settle
            raise
        finally:
            entry.view = None
        if state is None:
            return
        try:
            state.remove(old)
            if not delete:
                state.add(self._vectors(name, list(dict.fromkeys(ids))))
        except StateError:
            entry.state = None

    def settle(self, name: str) -> Callable[[], None]:
        """After a session's last write: save what changed (or rebuild), unmark. Returns
        the rest of a plain save — writing the changed records, then taking the marker
        away — for the caller to run once it has released the store's lock (a rebuild or
        a repair is done here, whole)."""
        self._saved(name)
        entry = self._entries.get(name)
        vault = self.vault(name)
        if entry is None or entry.token is None:
            if any(not vault.live(m) for m in vault.markers()):
                self.repair(name)
            return _nothing
        others = [m for m in vault.markers() if m.token != entry.token]
        tokens = [entry.token, *(m.token for m in others if not vault.live(m))]
        entry.token = None
        if entry.state is None or others or vault.generation() != entry.generation:
            self._rebuild(name, entry)
            vault.unmark(tokens)
            return _nothing
        write = self._save(name, entry, full=False, later=True)
        lock = self._saving.setdefault(name, threading.Lock())
        lock.acquire()

        def finish() -> None:
            try:
                write()
                vault.unmark(tokens)
            except BaseException:
                self._unsaved.add(name)  # the saved state is behind the points
                raise
            finally:
                lock.release()

        return finish

    def repair(self, name: str) -> Repaired:
        """Rebuild the statistics from every point, save them, clear every marker."""
        t0 = time.perf_counter()
        self._saved(name)
        entry = self._entries.setdefault(name, _Entry())
        self._rebuild(name, entry)
        vault = self.vault(name)
        vault.unmark([m.token for m in vault.markers()])
        entry.token = None
        assert entry.state is not None
        return Repaired(entry.state.points, len(entry.state.sums.terms),
                        time.perf_counter() - t0)

    def forget(self, name: str) -> None:
        """The collection is gone (dropped): forget its state and its vault's."""
        self._saved(name)
        self._entries.pop(name, None)
        vault = self._vaults.pop(name, None)
        (vault or self._vault(name)).drop()

    # -- reads ----------------------------------------------------------------------------

    def stats(self, name: str) -> CollectionStats | None:
        entry = self._entries.get(name)
        now = time.monotonic()
        if entry is not None and entry.token is not None:  # this process is writing
            return self._view(entry)
        vault = self.vault(name)
        if entry is not None and entry.state is not None and (
                not vault.shared or now - entry.checked_at < RECHECK):
            return self._view(entry)
        self._saved(name)
        entry = self._entries.setdefault(name, _Entry())
        entry.checked_at = now
        generation = vault.generation()
        if entry.state is not None and generation == entry.generation:
            return self._view(entry)
        if generation is None or any(not vault.live(m) for m in vault.markers()) \
                or not self._load(vault, entry):
            self._rebuild(name, entry)
            vault.unmark([m.token for m in vault.markers() if not vault.live(m)])
        return self._view(entry)

    # -- inside ---------------------------------------------------------------------------

    def _view(self, entry: _Entry) -> CollectionStats | None:
        if entry.view is None and entry.state is not None:
            entry.view = entry.state.view()
        return entry.view

    def _session(self, name: str) -> _Entry:
        entry = self._entries.setdefault(name, _Entry())
        vault = self.vault(name)
        if entry.token is None:
            self._saved(name)
            token = uuid.uuid4().hex
            vault.mark(token)  # before the first point of the session is written
            entry.token, entry.marked_at = token, time.monotonic()
            stale = entry.state is None or vault.generation() != entry.generation
            if stale and (vault.generation() is None or not self._load(vault, entry)):
                entry.state = None
            if any(m.token != token and not vault.live(m) for m in vault.markers()):
                entry.state = None  # a writer died since the last save
            if name in self._unsaved:
                self._unsaved.discard(name)
                entry.state = None  # this process's last save failed
        elif vault.shared and time.monotonic() - entry.marked_at > HEARTBEAT:
            vault.mark(entry.token)
            entry.marked_at = time.monotonic()
        return entry

    def _load(self, vault: StatsVault, entry: _Entry, tries: int = 3) -> bool:
        for attempt in range(tries):
            try:
                raw = vault.read()
                if raw is None:
                    return False
                entry.state, entry.generation, entry.block_gens = \
                    StatsState.from_records(*raw)
                entry.view = None
                return True
            except StateError:
                if attempt + 1 < tries:
                    time.sleep(0.05 * (attempt + 1))  # a save elsewhere, not finished
        return False

    def _rebuild(self, name: str, entry: _Entry) -> None:
        dims = int(self.store.info(name).meta.get("dimensions") or 0)
        entry.state = build((_as_vectors(r) for r in scroll_all(
            self.store, name, payload=False, vectors=True)), dims)
        entry.view = None
        entry.block_gens = {}
        entry.generation = max(entry.generation, self.vault(name).generation() or 0)
        self._save(name, entry, full=True)

    def _save(self, name: str, entry: _Entry, *, full: bool,
              later: bool = False) -> Callable[[], None]:
        """Save the state's changed records (all with ``full``); with ``later`` the
        records are serialised now and written by the function returned."""
        state = entry.state
        assert state is not None
        generation = entry.generation + 1
        blocks = set(state.blocks) if full else set(state.touched)
        for b in blocks:
            entry.block_gens[b] = generation
        vault = self.vault(name)
        write = functools.partial(vault.save, generation,
                                  state.head_bytes(generation, entry.block_gens),
                                  {b: state.block_bytes(b, generation) for b in blocks})
        state.touched.clear()
        entry.generation = generation
        if later:
            return write
        write()
        return _nothing

    def _vectors(self, name: str, ids: list[str]) -> list[Vectors]:
        if not ids:
            return []
        return [_as_vectors(r) for r in self.store.retrieve(name, ids, payload=False,
                                                            vectors=True)]


def _as_vectors(r: Record | Any) -> Vectors:
    sparse = r.sparse
    return Vectors(r.id, r.dense, sparse.indices if sparse is not None else [],
                   sparse.values if sparse is not None else [])
