"""A chunk found by :func:`agent_search.kb._retrieval._search.search`, and ranking hits again
(:mod:`agent_search.kb._retrieval._feedback`) with scores that still follow the ranking."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_search.kb._store import KBStore


@dataclass(slots=True)
class Hit:
    """A chunk found. ``key``: what the hybrid ranked it by (its fused standard score);
    ``own``: its score before the cap by the hit ranked above (``None``: not capped)."""

    point_id: str
    score: float
    payload: dict[str, Any]
    key: float = 0.0
    own: float | None = None


def reranked(hits: list[Hit], keys: list[float] | None, limit: int) -> list[Hit]:
    """The first ``limit`` of ``hits`` ranked by ``keys`` (none: as they are), each scored
    by its own score capped by the hit now ranked above it."""
    if keys is None:
        return hits[:limit]
    out: list[Hit] = []
    ceiling = 1.0
    for i in sorted(range(len(hits)), key=lambda i: -keys[i])[:limit]:
        hit = hits[i]
        ceiling = min(ceiling, hit.own if hit.own is not None else hit.score)
        out.append(replace(hit, score=ceiling, key=keys[i]))
    return out


def with_payloads(store: KBStore, collection: str, hits: list[Hit]) -> list[Hit]:
    """``hits`` with their payloads, read for those the hybrid ranked without one (a
    stored chunk's payload is never empty); a chunk removed meanwhile is left out. The ids
    were found under the request's filter, so reading them by id shows nothing else."""
    missing = [h.point_id for h in hits if not h.payload]
    if not missing:
        return hits
    payloads = {r.id: r.payload for r in store.retrieve(collection, missing, payload=True,
                                                        vectors=False)}
    out: list[Hit] = []
    for hit in hits:
        if not hit.payload:
            hit.payload = payloads.get(hit.point_id) or {}
        if hit.payload:
            out.append(hit)
    return out
