"""Entity graph of a collection, for ``graph: true`` searches.

Entities are found by a builtin, rule-based extractor (no model, no LLM), meant for
technical and scientific prose:

* ``acronym`` — upper-case tokens of 2+ characters that may carry digits or dashes
  (``DNA``, ``BRCA1``, ``IL-6``, ``HTTP``);
* ``name`` — runs of two or more capitalised words (``Qdrant Local Mode``,
  ``New York``), and single capitalised words that are not at a sentence start;
* ``code`` — identifiers written in back-ticks in Markdown (```create_handler```).

Names are matched case-insensitively. The graph (networkx) has a node per entity and per
chunk, ``mentions`` edges entity→chunk and ``co_occurs`` edges between entities found in
the same chunk (weight = number of such chunks). It is stored next to the collection as
``$AGENT_SEARCH_HOME/kb/graphs/<collection>.json`` (node-link JSON, written atomically).

At query time the query's entities (and any known entity name that occurs in the query)
are matched, expanded by one or two co-occurrence hops, returned as graph nodes, and the
chunks that mention them get a score boost (1 for a matched entity, 0.5 one hop away).
The graph holds every tenant's chunks, so a search walks it only through the chunks the
caller may read (:func:`associate`): the stored ``co_occurs`` weights and ``count``s are
whole-collection figures and are never shown.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import networkx as nx

from agent_search.kb._store import ENGLISH_STOP_WORDS
from agent_search.types import GraphNode

_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]*(?:-?[A-Z0-9]+)*\b")
_CAPWORD = re.compile(r"\b[A-Z][a-z][A-Za-z0-9'-]*\b")
_CODE = re.compile(r"`([^`\n]{2,60})`")
_SENT_START = re.compile(r"(?:^|[.!?:]\s+|\n)\s*$")
_NAME_RUN = re.compile(r"\b[A-Z][a-z][A-Za-z0-9'-]*(?:[ \t]+(?:of[ \t]+|de[ \t]+|the[ \t]+)?"
                       r"[A-Z][A-Za-z0-9'-]+)+\b")
MAX_ENTITIES_PER_CHUNK = 30
MAX_NEIGHBOURS = 20  # per entity and hop, strongest co-occurrence first
MAX_CHUNKS_PER_ENTITY = 1_000
"""Chunks of one entity looked at per search (bounds the work on a very common one)."""
MAX_CHUNKS_CHECKED = 20_000
"""Chunk ids asked of the store per collection and search; beyond it a chunk counts as
unreadable (fewer nodes, never one more)."""


def _codes(text: str) -> list[tuple[str, str]]:
    """Identifiers in back-ticks."""
    return [("code", m.group(1)) for m in _CODE.finditer(text)]


def _acronyms(text: str) -> list[tuple[str, str]]:
    """Upper-case tokens of 2+ characters (the pattern already asks for an upper-case
    first letter and no lower-case one)."""
    return [("acronym", m.group()) for m in _ACRONYM.finditer(text) if len(m.group()) >= 2]


def _names(text: str) -> list[tuple[str, str]]:
    """Runs of capitalised words (a leading stop word dropped), then single capitalised
    words outside those runs and not at a sentence start."""
    found: list[tuple[str, str]] = []
    in_runs: list[tuple[int, int]] = []
    for m in _NAME_RUN.finditer(text):
        words = m.group().split()
        if words[0].lower() in ENGLISH_STOP_WORDS:  # "The Query API" → "Query API"
            words = words[1:]
        in_runs.append((m.start(), m.end()))
        if len(words) >= 2:
            found.append(("name", " ".join(words)))
    for m in _CAPWORD.finditer(text):
        word = m.group()
        if not (word.lower() in ENGLISH_STOP_WORDS or _SENT_START.search(text[:m.start()])
                or any(a <= m.start() < b for a, b in in_runs)):  # in a longer name
            found.append(("name", word))
    return found


_EXTRACTORS: tuple[Callable[[str], list[tuple[str, str]]], ...] = (_codes, _acronyms, _names)
"""The entity kinds, in the order a key's first finding wins."""


def extract_entities(text: str) -> dict[str, tuple[str, str]]:
    """Entities of ``text``: key (lower-cased name) → (type, name as written), the first
    :data:`MAX_ENTITIES_PER_CHUNK`."""
    found: dict[str, tuple[str, str]] = {}
    for extract in _EXTRACTORS:
        for etype, name in extract(text):
            found.setdefault(name.lower(), (etype, name))
    return dict(list(found.items())[:MAX_ENTITIES_PER_CHUNK])


def graph_path(home: Path, collection: str) -> Path:
    return home / "kb" / "graphs" / f"{collection}.json"


_CACHE: dict[str, tuple[float, nx.Graph]] = {}
_LOCK = threading.RLock()


def load_graph(home: Path, collection: str) -> nx.Graph:
    path = graph_path(home, collection)
    with _LOCK:
        if not path.exists():
            return nx.Graph()
        mtime = path.stat().st_mtime
        cached = _CACHE.get(str(path))
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            graph: nx.Graph = nx.node_link_graph(data, edges="links")
        except (OSError, ValueError, KeyError, nx.NetworkXError) as exc:
            raise ValueError(f"entity graph {path} is unreadable ({exc}); "
                             "re-ingest the collection with graph enabled") from exc
        _CACHE[str(path)] = (mtime, graph)
        return graph


def _save(home: Path, collection: str, graph: nx.Graph) -> None:
    path = graph_path(home, collection)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = nx.node_link_data(graph, edges="links")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
    _CACHE[str(path)] = (path.stat().st_mtime, graph)


def update_graph(home: Path, collection: str, chunks: list[tuple[str, str, str]], *,
                 removed: list[str]) -> None:
    """Add ``(point_id, document_id, text)`` chunks (replacing what they said before) and
    forget ``removed`` chunks."""
    with _LOCK:
        graph = load_graph(home, collection).copy()
        for pid in [*removed, *(c[0] for c in chunks)]:
            _forget_chunk(graph, f"chunk:{pid}")
        for pid, doc_id, text in chunks:
            _add_chunk(graph, f"chunk:{pid}", doc_id, extract_entities(text))
        orphans = [n for n, d in graph.nodes(data=True)
                   if d.get("kind") == "entity" and d.get("count", 0) <= 0]
        graph.remove_nodes_from(orphans)
        _save(home, collection, graph)


def _forget_chunk(graph: nx.Graph, node: str) -> None:
    """Remove a chunk's node, one mention fewer for each entity it named."""
    if node not in graph:
        return
    for ent in list(graph.neighbors(node)):
        graph.nodes[ent]["count"] = max(0, graph.nodes[ent].get("count", 1) - 1)
    graph.remove_node(node)


def _add_chunk(graph: nx.Graph, node: str, doc_id: str,
               entities: dict[str, tuple[str, str]]) -> None:
    """A chunk's node, its ``mentions`` edges and its entities' ``co_occurs`` edges (a
    chunk without entities is left out)."""
    if not entities:
        return
    graph.add_node(node, kind="chunk", document_id=doc_id)
    for key, (etype, name) in entities.items():
        ent = f"entity:{key}"
        if ent not in graph:
            graph.add_node(ent, kind="entity", type=etype, name=name, count=0)
        graph.nodes[ent]["count"] = graph.nodes[ent].get("count", 0) + 1
        graph.add_edge(ent, node, relation="mentions")
    for a, b in combinations(sorted(entities), 2):
        ea, eb = f"entity:{a}", f"entity:{b}"
        w = graph.edges[ea, eb]["weight"] + 1 if graph.has_edge(ea, eb) else 1
        graph.add_edge(ea, eb, relation="co_occurs", weight=w)


def _query_entities(graph: nx.Graph, query: str) -> list[str]:
    keys = {f"entity:{k}" for k in extract_entities(query)}
    words = re.findall(r"[\w'-]+", query.lower())
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i:i + n])
            if phrase in ENGLISH_STOP_WORDS or len(phrase) < 2:
                continue
            keys.add(f"entity:{phrase}")
    return sorted(k for k in keys if k in graph)


Readable = Callable[[str, list[str]], set[str]]
"""``(collection, point ids)`` → the ids among them the caller may read."""


class _ReadableView:
    """The graph as one caller may see it: an entity's chunks are only those the caller
    may read (asked of the store in batches, remembered), so mentions, counts and
    co-occurrences come from readable chunks alone. ``readable`` None: every chunk."""

    def __init__(self, graph: nx.Graph, collection: str, readable: Readable | None) -> None:
        self.graph = graph
        self.collection = collection
        self.readable = readable
        self._known: dict[str, bool] = {}
        self._mentioned: dict[str, list[str]] = {}
        self.capped: set[str] = set()

    def _mentions(self, ent: str) -> list[str]:
        found = self._mentioned.get(ent)
        if found is None:
            found = []
            for n in self.graph.neighbors(ent):
                if self.graph.nodes[n].get("kind") == "chunk":
                    if len(found) == MAX_CHUNKS_PER_ENTITY:
                        self.capped.add(ent)
                        break
                    found.append(n.removeprefix("chunk:"))
            self._mentioned[ent] = found
        return found

    def prefetch(self, entities: list[str]) -> None:
        unknown = list(dict.fromkeys(p for e in entities for p in self._mentions(e)
                                     if p not in self._known))
        budget = max(0, MAX_CHUNKS_CHECKED - len(self._known))
        for pid in unknown[budget:]:
            self._known[pid] = False
        unknown = unknown[:budget]
        if not unknown:
            return
        allowed = set(unknown) if self.readable is None else \
            self.readable(self.collection, unknown)
        for pid in unknown:
            self._known[pid] = pid in allowed

    def chunks(self, ent: str) -> list[str]:
        """The readable chunks that mention ``ent``."""
        self.prefetch([ent])
        return [p for p in self._mentions(ent) if self._known.get(p)]

    def co_occurring(self, ent: str, seen: set[str]) -> tuple[list[tuple[str, int]], int]:
        """The strongest :data:`MAX_NEIGHBOURS` entities (not in ``seen``) named in the
        readable chunks that mention ``ent``, with their number of such chunks, and the
        total of those numbers over all of them (at least 1)."""
        weights: Counter[str] = Counter()
        for pid in self.chunks(ent):
            weights.update(n for n in self.graph.neighbors(f"chunk:{pid}")
                           if self.graph.nodes[n].get("kind") == "entity" and n not in seen)
        related = sorted(weights.items(), key=lambda x: (-x[1], x[0]))
        return related[:MAX_NEIGHBOURS], sum(weights.values()) or 1

    def count(self, ent: str) -> str:
        n = len(self.chunks(ent))
        return f"{n}+" if ent in self.capped else str(n)


def associate(home: Path, collections: list[str], query: str, hops: int = 1,
              readable: Readable | None = None
              ) -> tuple[list[GraphNode], dict[str, float]]:
    """Graph nodes related to ``query`` and a boost (0..1) per point id.

    The graph spans every tenant's documents; the answer must not. With ``readable`` (the
    caller's check, see :data:`Readable`) the graph is walked only through the chunks the
    caller may read: an entity is matched or reached only when a readable chunk mentions
    it, its count and its co-occurrences are counted in readable chunks, and only
    readable chunks are boosted (a boost earned in a private chunk would show through the
    ranking)."""
    nodes: dict[str, GraphNode] = {}
    boosts: dict[str, float] = {}
    for collection in collections:
        view = _ReadableView(load_graph(home, collection), collection, readable)
        _walk(view, query, hops, nodes, boosts)
    ranked = sorted(nodes.values(), key=lambda g: -(g.score or 0.0))[:50]
    return ranked, boosts


def _walk(view: _ReadableView, query: str, hops: int, nodes: dict[str, GraphNode],
          boosts: dict[str, float]) -> None:
    """One collection's part of :func:`associate`: the query's entities (those a readable
    chunk mentions), ``hops`` co-occurrence hops from them, and the boosts of the readable
    chunks that mention any entity reached (1 matched, 0.5 reached by a hop)."""
    graph, collection = view.graph, view.collection
    candidates = _query_entities(graph, query)
    view.prefetch(candidates)
    matched = [m for m in candidates if view.chunks(m)]
    for m in matched:
        nodes.setdefault(m, _node(graph, m, f"mentioned in {view.count(m)} chunk(s) of "
                                            f"{collection}", "query", 1.0,
                                  {"collection": collection}))
    frontier = {m: 1.0 for m in matched}
    seen = set(frontier)
    for hop in range(1, hops + 1):
        frontier = _hop(view, frontier, seen, nodes, hop)
        seen.update(frontier)
        view.prefetch(list(frontier))
    for ent in seen:
        weight = 1.0 if ent in matched else 0.5
        for pid in view.chunks(ent):
            boosts[pid] = max(boosts.get(pid, 0.0), weight)


def _hop(view: _ReadableView, frontier: dict[str, float], seen: set[str],
         nodes: dict[str, GraphNode], hop: int) -> dict[str, float]:
    """The entities one hop from ``frontier`` (not ``seen`` yet), each scored by its best
    path: half its origin's score, more the larger its share of the co-occurrences."""
    graph = view.graph
    nxt: dict[str, float] = {}
    for ent, score in frontier.items():
        related, total = view.co_occurring(ent, seen)
        for n, w in related:
            s = score * 0.5 * (0.5 + 0.5 * w / total)
            if s > nxt.get(n, 0.0):
                nxt[n] = s
                nodes[n] = _node(graph, n, f"co-occurs with {graph.nodes[ent].get('name')} "
                                           f"in {w} chunk(s)", "co_occurs", round(s, 4),
                                 {"collection": view.collection, "hop": hop})
    return nxt


def _node(graph: nx.Graph, ent: str, description: str, relation: str, score: float,
          metadata: dict[str, Any]) -> GraphNode:
    """The :class:`GraphNode` shown for the entity node ``ent``."""
    d = graph.nodes[ent]
    return GraphNode(id=ent, type=str(d.get("type", "entity")), name=str(d.get("name", ent)),
                     description=description, relation=relation, score=score,
                     metadata=metadata)


def graph_stats(home: Path, collection: str) -> dict[str, Any]:
    graph = load_graph(home, collection)
    kinds = Counter(d.get("kind") for _, d in graph.nodes(data=True))
    return {"entities": kinds.get("entity", 0), "chunks": kinds.get("chunk", 0),
            "edges": graph.number_of_edges()}
