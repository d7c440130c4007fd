"""A real (if small) search handler for the tests: ``CorpusHandler``, a word-overlap
search over documents kept in memory, and three corpora (web pages, kb chunks, db rows).

It is a handler like any other registered on a Searcher — the text-search layer is
pluggable by design, so tests use it rather than stand-ins. It records the requests it
receives so tests can check how filters were translated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent_search import Context, Request, Result, ResultItem

__all__ = ["DB_DOCS", "KB_DOCS", "WEB_DOCS", "CorpusHandler", "Doc", "Handlers"]

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


@dataclass
class Doc:
    title: str
    content: str
    url: str | None = None
    collection: str | None = None
    document_id: str | None = None
    model: str | None = None
    record_id: Any = None
    data: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class CorpusHandler:
    """Word-overlap search over ``docs``; honours limit, sites, collections, models and
    equality wheres (``field = value`` on the row data or the metadata)."""

    def __init__(self, type_: str, docs: list[Doc], *, fail: str | None = None) -> None:
        self.type = type_
        self.docs = docs
        self.fail = fail
        self.requests: list[Request] = []

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return request.type == self.type

    async def search(self, ctx: Context, request: Request) -> Result:
        self.requests.append(request)
        if self.fail:
            return Result(type=self.type, query=request.query, error=self.fail)
        q = _words(request.query)
        hits: list[tuple[float, Doc]] = []
        for doc in self.docs:
            if request.sites and not any(s in (doc.url or "") for s in request.sites):
                continue
            if request.collections and doc.collection not in request.collections:
                continue
            if request.models and doc.model not in request.models:
                continue
            fields = {**doc.metadata, **(doc.data or {})}
            if any(w.field is not None and fields.get(w.field) != w.value
                   for w in request.wheres):
                continue
            overlap = len(q & _words(doc.title + " " + doc.content))
            if overlap:
                hits.append((overlap / max(1, len(q)), doc))
        hits.sort(key=lambda h: -h[0])
        items = [
            ResultItem(type=self.type, title=d.title, content=d.content, url=d.url,
                       score=round(score, 4), collection=d.collection,
                       document_id=d.document_id, model=d.model, record_id=d.record_id,
                       data=d.data, metadata=dict(d.metadata))
            for score, d in hits[: request.limit]
        ]
        return Result(type=self.type, query=request.query, items=items, total=len(hits))


WEB_DOCS = [
    Doc("Hello, Semantic Kernel!", "Semantic Kernel is a lightweight SDK for LLM apps.",
        "https://devblogs.microsoft.com/semantic-kernel/hello-world/"),
    Doc("Introduction to Semantic Kernel", "Semantic Kernel is an open-source development kit.",
        "https://learn.microsoft.com/en-us/semantic-kernel/overview/"),
    Doc("microsoft/semantic-kernel", "Integrate cutting-edge LLM technology quickly: Semantic "
        "Kernel on GitHub.", "https://github.com/microsoft/semantic-kernel"),
    Doc("Architecting AI Apps with Semantic Kernel", "How to architect AI apps with the kernel.",
        "https://devblogs.microsoft.com/semantic-kernel/architecting-ai-apps/"),
    Doc("Cooking pasta", "Boil water, add salt.", "https://example.org/pasta"),
]

KB_DOCS = [
    Doc("Hybrid search", "Hybrid search fuses dense and sparse retrieval with RRF.",
        collection="docs", document_id="hybrid.md",
        metadata={"source_url": "file:///docs/hybrid.md", "author": "ana", "chunk_index": 0}),
    Doc("Citations", "Citation ids are unique across the whole request.",
        collection="docs", document_id="citations.md",
        metadata={"source_url": "file:///docs/citations.md", "author": "bo", "chunk_index": 0}),
    Doc("Search notes", "Notes about search engines and retrieval.",
        collection="notes", document_id="n1.md",
        metadata={"author": "cy", "chunk_index": 0}),
]

DB_DOCS = [
    Doc("AC/DC", "Artist AC/DC, rock band", model="artists", record_id=1,
        data={"ArtistId": 1, "Name": "AC/DC", "Genre": "Rock"}),
    Doc("Accept", "Artist Accept, rock band", model="artists", record_id=2,
        data={"ArtistId": 2, "Name": "Accept", "Genre": "Metal"}),
    Doc("Balls to the Wall", "Album by Accept, rock", model="albums", record_id=2,
        data={"AlbumId": 2, "Title": "Balls to the Wall", "ArtistId": 2}),
]


@dataclass
class Handlers:
    """One corpus handler per search type (the ``handlers`` fixture of tests/textsearch)."""

    web: CorpusHandler
    kb: CorpusHandler
    db: CorpusHandler
