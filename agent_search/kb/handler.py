"""The ``kb`` search handler: hybrid dense + BM25 retrieval over Qdrant collections, with
optional entity-graph association.

Parameters read (:class:`KBOptions`, ``request.options``): ``collections`` (unset →
``kb.collections``, and when that is empty too, every collection in the store except
those of ``eval retrieval``, which are never searched, named or not, unless the handler
was built with ``evaluation=True``), ``graph`` (or ``kb.graph``), ``wheres`` (metadata
filters, run by the engine; a payload index is created for a filtered field the first
time it is filtered on); and ``query`` and ``limit`` of the request. The relevance floor
is the request's ``min_score`` (``kb.min_score`` when unset), cut once and counted by the
searcher; see :mod:`agent_search.kb._retrieval._search` for what the score means per mode.

Every query this handler sends is ANDed with the visibility of the context's identity
(:func:`agent_search.kb._store._tenancy.visibility`): the chunks the caller may read. It is added
here, below the request's filter, so no request field, hook, tool or MCP argument can
widen it; graph nodes are limited to entities of the chunks returned.

Every default comes from the ``kb`` section of the search's own config (``ctx.config``:
an assistant's merged config, as a create hook may have changed it), filled once, by the
searcher (:meth:`KBOptions.filled`). The other ``request.options`` keys:

* ``mode``: ``"hybrid"`` (default, ``kb.mode``), ``"dense"`` or ``"sparse"``;
* ``fusion``: ``"calibrated"`` (default, ``kb.fusion``: absolute scores), or the relative
  ``"zscore"``, ``"dbsf"`` or ``"rrf"`` for hybrid;
* ``prefetch``: candidates per branch in hybrid mode (default ``kb.prefetch``);
* ``prf_docs``: dense pseudo-relevance feedback from the top N results (``kb.prf_docs``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import Field, StrictInt, field_validator

from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.errors import FilterError
from agent_search.kb._store import Group, HasId, all_of, indexed_fields, to_filter, visibility
from agent_search.kb.settings import FusionMethod, KBSettings, SearchMode
from agent_search.registry import config_option
from agent_search.trace import first_line, span
from agent_search.types import (
    ABSOLUTE_MAX_LIMIT,
    MAX_WHERE_CLAUSES,
    QueryWhere,
    Request,
    Result,
    ResultItem,
    SearchOptions,
)

if TYPE_CHECKING:  # imported where used: numpy, the store and the model load on the first search
    import numpy as np

    from agent_search.embedding import Embedder, VectorCache
    from agent_search.kb._retrieval import Hit
    from agent_search.kb._store import CollectionInfo, KBStore

class KBOptions(SearchOptions):
    """The kb handler's parameters (``request.options``; keys of other handlers are
    ignored); unset keys take the ``kb`` section's values, filled once by the searcher
    (:meth:`filled`). The CLI and the MCP server offer ``mode``'s choices from here."""

    collections: list[str] | None = config_option(KBSettings, "collections",
                                                  "kb.collections")
    graph: bool | None = config_option(KBSettings, "graph", "kb.graph")
    wheres: list[QueryWhere] | None = Field(
        default=None, max_length=MAX_WHERE_CLAUSES,
        description="metadata filters, ANDed (run by the engine)")
    mode: SearchMode | None = config_option(KBSettings, "mode", "kb.mode")
    fusion: FusionMethod | None = config_option(KBSettings, "fusion", "kb.fusion")
    prefetch: StrictInt | None = config_option(KBSettings, "prefetch", "kb.prefetch")
    prf_docs: StrictInt | None = config_option(KBSettings, "prf_docs", "kb.prf_docs")

    @field_validator("mode", "fusion", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    def filled(self, config: SearchConfig) -> KBOptions:
        kb = config.kb.settings(KBSettings)  # validated once per config, then cached
        unset = {name: getattr(kb, name) for name in _FROM_CONFIG
                 if getattr(self, name) is None}
        return self.model_copy(update=unset) if unset else self


_FROM_CONFIG = ("collections", "graph", "mode", "fusion", "prefetch", "prf_docs")
"""The options a ``kb`` section key gives a default to (the key of the same name)."""
_SETTINGS = ("mode", "fusion", "prefetch", "prf_docs")
"""The options that override a setting of the search (:class:`KBSettings`)."""


class KBHandler:
    """Knowledge-base search (``type = "kb"``). Store and model open on first search."""

    type = "kb"
    options_model = KBOptions

    def __init__(self, config: SearchConfig, *, evaluation: bool = False) -> None:
        self.config = config
        self.settings = KBSettings.from_config(config)
        self.evaluation = evaluation

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return request.type == "kb"

    async def ping(self) -> None:
        """Raise if the store cannot be read (the service's ``/readyz``)."""
        from agent_search.kb._manage import list_collections

        await list_collections(self.config)

    async def search(self, ctx: Context, request: Request) -> Result:
        from agent_search.embedding import EmbeddingError
        from agent_search.kb._store import CollectionMismatchError, StoreError

        started = time.perf_counter()
        result = Result(type="kb", query=request.query)
        try:
            await self._search(ctx, request, result)
        except (StoreError, EmbeddingError, CollectionMismatchError, FilterError,
                ValueError) as exc:
            result.items = []
            result.error = " ".join(str(exc).split()) or type(exc).__name__
        except Exception as exc:  # unexpected: still a Result, never a raise
            result.items = []
            result.error = first_line(exc)
        result.total = len(result.items)
        result.duration_ms = (time.perf_counter() - started) * 1000.0
        return result

    async def cache_version(self, ctx: Context, request: Request) -> str | None:
        """The searched collections' state for the result cache: the change time and size
        of each one's statistics head (rewritten by every ingest, removal or repair that
        changes points, in any process) and of its graph; None (not cached) for a Qdrant
        server, which other writers change unseen."""
        plan = _SearchPlan.of(ctx.config if ctx.config is not None else self.config,
                              request)
        if plan.settings.url:
            return None
        return await anyio.to_thread.run_sync(_collections_state, Path(self.config.home),
                                              plan.collections)

    async def _search(self, ctx: Context, request: Request, result: Result) -> None:
        plan = _SearchPlan.of(ctx.config if ctx.config is not None else self.config,
                              request)
        settings, mode, limit = plan.settings, plan.mode, plan.limit
        use_graph = plan.graph
        request_filter = to_filter(plan.wheres)
        # the caller's identity, from the context the entry point built: never from the
        # request, and never left out
        allowed = visibility(ctx.user_id, ctx.team_id)

        home = self.config.home
        # one worker-thread hop for the whole synchronous part: on a busy machine every
        # hop can wait for a time slice, which showed in the latency
        # with the graph, fetch more candidates so boosted chunks can rise into the top
        fetch = min(limit * 3, ABSOLUTE_MAX_LIMIT) if use_graph else limit
        infos, hits = await anyio.to_thread.run_sync(
            _retrieve, settings, home, plan.collections, mode, fetch, request.query,
            request_filter, allowed, self.evaluation)
        if not infos:  # an empty knowledge base: nothing to find, nothing wrong
            result.warnings.append(_EMPTY.format(home=home))
            return

        if use_graph:
            hits = await _graph_boosted(settings, home, infos, request.query, allowed, hits,
                                        result)
        hits.sort(key=lambda ch: -ch[1].score)
        if settings.judge_url and settings.judge_model and hits:
            hits = await _judged(settings, request.query, hits, result)
        result.items = [_item(c, h) for c, h in hits[:limit]]


async def _graph_boosted(settings: KBSettings, home: Path, infos: list[CollectionInfo],
                         query: str, allowed: Group, hits: list[tuple[str, Hit]],
                         result: Result) -> list[tuple[str, Hit]]:
    """The hits with the entity graph's boosts added (chunks the caller may read only);
    the graph's nodes go to ``result``."""
    from agent_search.kb._retrieval import Hit, associate
    from agent_search.kb._store import get_store

    with span("graph_search"):
        nodes, boosts = await anyio.to_thread.run_sync(
            associate, home, [i.name for i in infos], query,
            settings.graph_hops, _readable(get_store(settings, home), allowed))
        result.graph_nodes = nodes
        if boosts:
            hits = [(c, Hit(h.point_id, min(1.0, h.score + settings.graph_boost
                                             * boosts.get(h.point_id, 0.0)), h.payload))
                    for c, h in hits]
    return hits


async def _judged(settings: KBSettings, query: str, hits: list[tuple[str, Hit]],
                  result: Result) -> list[tuple[str, Hit]]:
    """The hits after the answerability judge (its warning, if any, to ``result``), ranked
    by score again (stable: the judge's verdict first)."""
    from agent_search.kb._judge import judge

    with span("answerability_judge"):
        hits, warning = await judge(settings, query, hits)
    if warning:
        result.warnings.append(warning)
    hits.sort(key=lambda ch: -ch[1].score)
    return hits


@dataclass(frozen=True, slots=True)
class _SearchPlan:
    """Every kb setting of one search: the request's options (filled by the searcher
    from the ``kb`` section of the *search's* config, ``ctx.config``: the assistant's
    merged config, as a create hook or a per-request layer left it), over that section.
    The relevance floor is not here: ``min_score`` is cut and counted by the searcher."""

    settings: KBSettings
    mode: str
    graph: bool
    collections: list[str]
    limit: int
    wheres: list[QueryWhere]

    @classmethod
    def of(cls, config: SearchConfig, request: Request) -> _SearchPlan:
        kb = config.kb.settings(KBSettings)  # validated once per config, then cached
        options = KBOptions.of(request).filled(config)  # filled already: itself
        given = {name: getattr(options, name) for name in _SETTINGS
                 if getattr(options, name) != getattr(kb, name)}
        settings = kb.model_copy(update=given) if given else kb
        return cls(
            settings=settings, mode=settings.mode, graph=bool(options.graph),
            collections=list(options.collections or ()),
            limit=request.limit or config.limit_for("kb"),  # filled by the searcher
            wheres=list(options.wheres or ()))


def _collections_state(home: Path, wanted: list[str]) -> str:
    """What :meth:`KBHandler.cache_version` compares: the collections (all when none is
    named) and each one's statistics head and graph file, by size and change time."""
    from agent_search.kb._retrieval import graph_path
    from agent_search.kb._store import edge_root

    root = edge_root(home)
    try:
        names = sorted(wanted) if wanted else sorted(p.name for p in root.iterdir())
    except OSError:
        names = []
    parts = [",".join(names)]
    for name in names:
        for file in (root / name / "stats" / "head.npz", graph_path(home, name)):
            try:
                st = file.stat()
                parts.append(f"{st.st_size}:{st.st_mtime_ns}")
            except (OSError, ValueError):
                parts.append("-")
    return "/".join(parts)


def _readable(store: KBStore, allowed: Group) -> Callable[[str, list[str]], set[str]]:
    """The caller's check for the graph: which of some point ids it may read (the same
    visibility filter as the search, asked of the store)."""
    def check(collection: str, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        flt = all_of(allowed, Group(must=(HasId(tuple(ids)),)))
        records, _ = store.scroll(collection, flt, limit=len(ids), offset=None,
                                  payload=False, vectors=False)
        return {r.id for r in records}

    return check


_EMPTY = ("no collections in {home} (the data home; AGENT_SEARCH_HOME names another): add "
          "documents with 'agent-search kb ingest PATH -c NAME'")


def _suggestion(store: KBStore, name: str, existing: list[str], allowed: Group | None) -> str:
    """`` — did you mean 'docs'?`` for the collection ``name`` is a likely typo of,
    when the caller can read something in it (a name is not told to whom it says
    nothing)."""
    from agent_search.errors import closest, did_you_mean

    near = closest(name, existing)
    if near is None or (allowed is not None and not store.count(near, allowed)):
        return ""
    return did_you_mean(name, [near])


_HEADINGS_MAX = 50_000
"""Heading paths kept embedded (all models together)."""


@functools.cache
def _headings() -> VectorCache:
    """Heading paths embedded, by model: a collection's headings repeat across searches
    (made on first use: numpy loads with the first search, not with the handler)."""
    from agent_search.embedding import VectorCache

    return VectorCache(_HEADINGS_MAX)


def _embed_headings(embedder: Embedder, texts: list[str]) -> np.ndarray[Any, Any]:
    """The heading paths' vectors (as passages), those not embedded yet in one batch."""
    return _headings().get(embedder.embed, texts, scope=embedder.model_id)


def _embed_query(embedder: Embedder, query: str) -> np.ndarray[Any, Any]:
    vector: np.ndarray[Any, Any] = embedder.embed_query(query)
    return vector


def _resolve(settings: KBSettings, home: Path, wanted: list[str], evaluation: bool = False,
             allowed: Group | None = None
             ) -> tuple[KBStore, list[tuple[CollectionInfo, Embedder]]]:
    """Store and the collections to search (all of them when none is named), each with the
    embedder it was built with; raises naming missing collections, with the collection a
    missing name is a likely typo of (one the caller can read a chunk of: ``allowed``).
    Evaluation collections are invisible (listed as missing when named) unless
    ``evaluation``."""
    from agent_search.embedding import embedder_for_collection
    from agent_search.kb._store import get_store, is_eval_collection, store_absent

    if store_absent(settings, home):  # nothing ingested in this data home: open nothing
        raise ValueError(f"{_not_found(wanted)}: {_EMPTY.format(home=home)}")
    store = get_store(settings, home)
    existing = [c for c in store.collections() if evaluation or not is_eval_collection(c)]
    wanted = list(dict.fromkeys(wanted)) or existing
    missing = [c for c in wanted if c not in existing]
    if missing:
        raise ValueError(_not_found(missing)
                         + _suggestion(store, missing[0], existing, allowed))
    out: list[tuple[CollectionInfo, Embedder]] = []
    for name in wanted:
        info = store.info(name)
        out.append((info, embedder_for_collection(info.meta, settings, home)))
    return store, out


def _not_found(names: list[str]) -> str:
    """``collection 'a' not found`` / ``collections 'a', 'b' not found``."""
    listed = ", ".join(repr(c) for c in names)
    return f"collection{'s' if len(names) > 1 else ''} {listed} not found"


def _retrieve(settings: KBSettings, home: Path, wanted: list[str], mode: str, limit: int,
              query: str, request_filter: Group | None, allowed: Group,
              evaluation: bool = False) -> tuple[list[CollectionInfo], list[tuple[str, Hit]]]:
    """Resolve the collections, embed the query once per model, search each collection.

    Runs in one worker thread; the spans nest under the search's trace node through the
    context the thread runs in. A vector of another size than the collection holds is a
    :class:`CollectionMismatchError`, never a search."""
    from agent_search.kb._retrieval import dense_background
    from agent_search.kb._store import check_compatible, store_absent

    if not wanted and store_absent(settings, home):
        return [], []  # nothing ingested here: nothing to search (and no store to open)
    store, targets = _resolve(settings, home, wanted, evaluation, allowed)
    vectors = _query_vectors([e for _, e in targets], query) \
        if mode in ("dense", "hybrid") else {}
    hits: list[tuple[str, Hit]] = []
    with span("vector_search", mode=mode, collections=len(targets)) as node:
        for info, embedder in targets:
            # searches use the collection's own BM25 parameters; only the vectors must agree
            check_compatible(info.name, info.meta, embedder, settings, bm25=False)
            store.ensure_indexes(info.name, indexed_fields(request_filter))
            background = (dense_background(embedder, home) if mode != "sparse"
                          and settings.score_scale == "background" else None)
            found = _search_one(store, info, settings, mode, limit,
                                vectors.get(embedder.model_id), query,
                                all_of(request_filter, allowed), background,
                                settings.score_scale == "background", home, embedder)
            if settings.foreign_veto and mode != "sparse":
                found = _weigh_foreign(store, info, settings, found, query,
                                       vectors.get(embedder.model_id), background, embedder,
                                       home)
            hits.extend(found)
        node.attributes["hits"] = len(hits)
    return [info for info, _ in targets], hits


def _query_vectors(embedders: list[Embedder], query: str) -> dict[str, Any]:
    """The query embedded once per model (model id → vector)."""
    vectors: dict[str, Any] = {}
    for embedder in embedders:
        if embedder.model_id not in vectors:
            with span("embedding", model=embedder.model_id):
                vectors[embedder.model_id] = _embed_query(embedder, query)
    return vectors


def _search_one(store: KBStore, info: CollectionInfo, settings: KBSettings, mode: str,
                limit: int, dense: Any, query: str, flt: Group | None,
                background: Any = None, evidence: bool = True,
                home: Path | None = None,
                embedder: Embedder | None = None) -> list[tuple[str, Hit]]:
    """One collection's hits, scored as evidence over the query's background (its
    similarity to unrelated text for this model and these BM25 settings) unless
    ``evidence`` is off (``kb.score_scale: reference``)."""
    from agent_search.kb._retrieval import QueryPlan, null_of, search
    from agent_search.kb._store import bm25_of

    bm25 = bm25_of(info.meta, settings)
    sparse = bm25.query_vector(query) if mode != "dense" else None
    plan = QueryPlan.of(settings, mode, limit, bm25.k1)
    null = null_of(background, bm25, dense, sparse, query, home) if evidence else None
    headings = (functools.partial(_embed_headings, embedder) if embedder is not None
                and settings.heading_weight > 0.0 else None)
    found = search(store, info.name, plan, dense, sparse, flt, info.points, null, headings)
    return [(info.name, h) for h in found]


def _weigh_foreign(store: KBStore, info: CollectionInfo, settings: KBSettings,
                   found: list[tuple[str, Hit]], query: str, dense: Any, background: Any,
                   embedder: Embedder, home: Path | None = None) -> list[tuple[str, Hit]]:
    """The hits weighed by the question's own evidence against them (:mod:`._foreign`):
    the meaning it keeps without the rare words their passages lack."""
    from agent_search.kb._retrieval import null_of, weigh
    from agent_search.kb._store import bm25_of

    bm25 = bm25_of(info.meta, settings)
    null = (null_of(background, bm25, dense, None, query, home)
            if background is not None else None)
    with span("foreign_words"):
        hits = weigh(store, info.name, [h for _, h in found], query, bm25, dense, null,
                     lambda text: _embed_query(embedder, text))
    return [(info.name, h) for h in hits]


def _item(collection: str, hit: Hit) -> ResultItem:
    """The result item of one hit: its payload's text, title and metadata."""
    p = hit.payload
    metadata = _metadata(p)
    title = _title(p.get("title"), metadata["headings"])
    # every value is built here with its declared type, and validating 100-200 items per
    # query showed in the latency; a copy of a blank item with these fields set (the same
    # item as model_construct's, fields set included) is ~3× quicker than constructing it
    return _BLANK_ITEM.model_copy(update={
        "type": "kb",
        "title": _str_or_none(title),
        "content": str(p.get("content") or ""),
        "score": float(min(1.0, max(0.0, hit.score))),
        "document_id": _str_or_none(p.get("document_id")),
        "collection": collection,
        "metadata": metadata,
    })


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


def _metadata(p: dict[str, Any]) -> dict[str, Any]:
    """A hit's metadata: source, chunk index, headings, page, then the document's own
    metadata where it does not override those."""
    metadata: dict[str, Any] = {
        "source": p.get("source"),
        "chunk_index": p.get("chunk_index"),
        "headings": list(p.get("headings") or []),
    }
    if p.get("page") is not None:
        metadata["page"] = p["page"]
    extra = p.get("meta")
    if isinstance(extra, dict):
        metadata.update({k: v for k, v in extra.items() if k not in metadata})
    return metadata


def _title(title: Any, headings: list[Any]) -> Any:
    """The document's title with the chunk's innermost heading: "README › Configuration"
    tells a reader (and the LLM) which part of a long document the chunk comes from."""
    section = headings[-1] if headings else None
    if section and str(section) != str(title):
        return f"{title} › {section}" if title else str(section)
    return title


_BLANK_ITEM = ResultItem.model_construct()
"""Never handed out: :func:`_item` copies it (the copy gets its own ``metadata``)."""


def create_handler(config: SearchConfig | None = None) -> KBHandler:
    """The kb handler for ``config`` (its ``kb`` section is validated here)."""
    return KBHandler(config or SearchConfig())
