"""A chunk found by :func:`agent_search.kb._retrieval._search.search`, and ranking hits again
(:mod:`agent_search.kb._retrieval._feedback`, :func:`diversified`) with scores that still
follow the ranking."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

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

    @property
    def uncapped(self) -> float:
        """Its own score: ``own`` when a cap lowered it, else the score."""
        return self.own if self.own is not None else self.score


def reranked(hits: list[Hit], keys: list[float] | None, limit: int) -> list[Hit]:
    """The first ``limit`` of ``hits`` ranked by ``keys`` (none: as they are), each scored
    by its own score capped by the hit now ranked above it."""
    if keys is None:
        return hits[:limit]
    out: list[Hit] = []
    ceiling = 1.0
    for i in sorted(range(len(hits)), key=lambda i: -keys[i])[:limit]:
        hit = hits[i]
        ceiling = min(ceiling, hit.uncapped)
        out.append(replace(hit, score=ceiling, key=keys[i]))
    return out


def document_of(hit: Hit) -> str:
    """The document a hit's chunk comes from: its ``document_id`` (one per ingested file),
    else its source, else the chunk itself (a chunk of nothing known is its own document)."""
    p = hit.payload
    return str(p.get("document_id") or p.get("source") or hit.point_id)


def heading_path(hit: Hit) -> str:
    """The chunk's place in its page as a reader sees it: "title › heading › …"."""
    p = hit.payload
    parts = [str(p.get("title") or ""), *(str(h) for h in p.get("headings") or [])]
    return " › ".join(x for x in parts if x)


def heading_keys(keys: list[float], cosines: list[float], weight: float,
                 spread: float = 0.0) -> list[float]:
    """``keys`` plus ``weight`` × each candidate's standard score, among the candidates, of
    its heading path's cosine to the question (``cosines``), its deviation at least
    ``spread`` (the spread of the question's cosine to unrelated text: where the
    candidates' headings barely differ — copies of one page, one heading repeated — their
    differences are noise, not a standard deviation's worth of evidence).

    A chunk's text is embedded with its title and headings, but in a long section the
    heading is a few words of 256 tokens: "How do I uninstall Homebrew?" over a section
    on the uninstall script says what the section answers better than its shell lines
    do. The heading's own similarity, compared among the candidates (all of them are on
    the question's topic; what counts is which section is *about* it), is that evidence.
    Unchanged when the candidates' headings do not differ."""
    if weight <= 0.0 or len(cosines) < 2:
        return list(keys)
    c = np.asarray(cosines, dtype=np.float64)
    std = max(float(c.std()), spread)
    if std <= 1e-9:
        return list(keys)
    z = (c - float(c.mean())) / std
    return [k + weight * float(zi) for k, zi in zip(keys, z.tolist(), strict=True)]


def diversified(hits: list[Hit], diversity: float, limit: int) -> list[Hit]:
    """The first ``limit`` of ``hits`` (ranked, with payloads) with each document's best
    chunk brought before the further chunks of documents already listed.

    Three chunks of one long page often fill the first three places, and the page that
    answers, ranked fourth, is not read. Going down the list, when the next chunk's
    document is already listed, the first chunk below it of a document not yet listed
    takes its place if its score is at least ``1 − diversity`` of that chunk's:
    ``diversity`` 0 keeps the ranking, 1 lists every document's best chunk first.

    The first hit never moves, so whether anything clears a floor is unchanged. Scores
    stay each hit's own evidence, capped by the hit now ranked above it (the handler sorts
    by score): a chunk that gave way keeps at least ``1 − diversity`` of the score it had,
    since whatever now goes before it scored at least that share of it."""
    if diversity <= 0.0 or len(hits) <= 1:
        return hits[:limit]
    pending, listed = list(hits), set[str]()
    out: list[Hit] = []
    ceiling = 1.0
    while pending and len(out) < limit:
        hit = pending.pop(_pick(pending, listed, diversity))
        listed.add(document_of(hit))
        ceiling = min(ceiling, hit.uncapped)
        out.append(replace(hit, score=ceiling))
    return out


def _pick(pending: list[Hit], listed: set[str], diversity: float) -> int:
    """Which of the ``pending`` hits :func:`diversified` lists next: the first, unless its
    document is listed and a chunk of a document not yet listed scores at least
    ``1 − diversity`` of it."""
    if document_of(pending[0]) not in listed:
        return 0
    bar = (1.0 - diversity) * pending[0].score
    return next((j for j, h in enumerate(pending)
                 if document_of(h) not in listed and h.score >= bar), 0)


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
