"""Merging items from several results: deduplicate, keep the strongest copy, weight.

The same record found by several searches is kept once. Identity is, in this order of
preference: ``model`` + ``record_id`` (database rows); ``collection`` + ``document_id``
(+ chunk index), or ``collection`` + the passage's text (knowledge-base chunks: the same
passage twice is one reference); the normalized URL (web pages). Of the copies
the one from the highest-priority source wins (user > hook > auto), ties going to the
higher final score, then to the earlier one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, urlencode

from agent_search.types import SOURCE_PRIORITY, Result, ResultItem

_TRACKING_PREFIXES = ("utm_", "fbclid", "gclid", "mc_", "ref_src")


# Already canonical but for the scheme: lower-case host without www./port/userinfo, a path
# without a trailing slash, no query or fragment. Most result URLs look like this, and
# matching is far cheaper than taking them apart.
_PLAIN_URL = re.compile(r"https?://(?!www\.)[a-z0-9.-]+(?:/[^?#\s]*[^/?#\s])?")


def normalize_url(url: str) -> str:
    """A canonical form for comparing URLs: lower-case scheme and host, no ``www.``, no
    default port, fragment or tracking parameters, sorted query, no trailing slash.

    Cached: the same page often comes back from several sources and searches.
    """
    if _PLAIN_URL.fullmatch(url):
        return url if url[4] == ":" else "http" + url[5:]
    return _normalize_url(url)


@functools.lru_cache(maxsize=8192)
def _normalize_url(url: str) -> str:
    scheme, rest = _scheme_and_rest(url.strip())
    rest, _, query = rest.partition("#")[0].partition("?")
    slash = rest.find("/")
    host, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:].rstrip("/"))
    pairs = _kept_query(query)
    return f"{scheme}://{_bare_host(host)}{path}" + (f"?{urlencode(pairs)}" if pairs else "")


def _scheme_and_rest(text: str) -> tuple[str, str]:
    """The scheme (``http`` when there is none, and for ``https``: the same page over
    either scheme is the same record) and what follows ``://``."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "http", text
    scheme = scheme.lower()
    return ("http" if scheme == "https" else scheme), rest


def _bare_host(host: str) -> str:
    """``host`` lower-cased, without credentials, a default port or ``www.``."""
    host = host.lower().rpartition("@")[2]
    if host.endswith((":80", ":443")):
        host = host.rpartition(":")[0]
    return host.removeprefix("www.")


def _kept_query(query: str) -> list[tuple[str, str]]:
    """The query's parameters but the tracking ones, sorted."""
    return sorted((k, v) for k, v in parse_qsl(query, keep_blank_values=True)
                  if not k.lower().startswith(_TRACKING_PREFIXES))


def identity_keys(item: ResultItem) -> list[tuple[str, ...]]:
    """The keys under which ``item`` counts as the same record as another."""
    keys: list[tuple[str, ...]] = []
    if item.model and item.record_id is not None:
        keys.append(("db", item.model, str(item.record_id)))
    if item.collection and item.document_id:
        chunk = item.metadata.get("chunk_index")
        keys.append(("kb", item.collection, item.document_id, "" if chunk is None else str(chunk)))
        if item.content:  # the same passage under two documents (one file sent twice)
            keys.append(("passage", item.collection, item.content))
    if item.url:
        keys.append(("url", normalize_url(item.url)))
    return keys


def _stronger(a: ResultItem, b: ResultItem) -> bool:
    """Is ``a`` a better copy to keep than ``b``?"""
    pa, pb = SOURCE_PRIORITY.get(a.source or "", 9), SOURCE_PRIORITY.get(b.source or "", 9)
    if pa != pb:
        return pa < pb
    return a.final_score > b.final_score


def dedupe(items: Iterable[ResultItem]) -> list[ResultItem]:
    """Keep one copy per identity; order is the first appearance of each record."""
    kept: list[ResultItem] = []
    index: dict[tuple[str, ...], int] = {}
    for item in items:
        if item.model or item.collection:
            _keep(kept, index, item, identity_keys(item))
        elif item.url:
            # the usual web item: its url is its only identity (what identity_keys would
            # return, without building a list for it)
            _keep(kept, index, item, (("url", normalize_url(item.url)),))
        else:
            kept.append(item)  # no identity at all: never a duplicate of anything
    return kept


def _keep(kept: list[ResultItem], index: dict[tuple[str, ...], int], item: ResultItem,
          keys: Sequence[tuple[str, ...]]) -> None:
    """``item`` into ``kept``: a new record, or in place of the copy of its record it is
    stronger than (found under any of its ``keys``); every key then points at its slot."""
    slot = -1
    for key in keys:
        slot = index.get(key, -1)
        if slot >= 0:
            break
    if slot < 0:
        slot = len(kept)
        kept.append(item)
    elif _stronger(item, kept[slot]):
        kept[slot] = item
    for key in keys:
        index.setdefault(key, slot)


def merge_items(results: Iterable[Result]) -> list[ResultItem]:
    """All items of the successful parts of ``results``, deduplicated (not yet sorted)."""
    return dedupe([item for r in results for item in r.items])


def keep_each_best(ranked: list[ResultItem], top_n: int,
                   results: Sequence[Result]) -> list[ResultItem]:
    """The first ``top_n`` of ``ranked`` (0 = all), where every search that found
    something keeps its best item.

    Searches merged together often asked different questions (a kb search for how
    something works beside a db search for products): their scores say how well each
    item answers *its own* question, so a search with many strong rows (eight db rows
    that satisfy every condition, 1.00 each) must not push another search's best answer
    out of the cut. Each search's best-ranked item is reserved a place first; the
    remaining places go by rank; the kept items stay in ranked order."""
    if top_n <= 0 or top_n >= len(ranked):
        return ranked
    head = ranked[:top_n]
    if _each_search_in(head, results):
        return head  # nothing to reserve: the plain cut already keeps each search's best
    reserved = _best_places(ranked, results, top_n)
    rest = (n for n in range(len(ranked)) if n not in reserved)
    kept = reserved | {n for _, n in zip(range(top_n - len(reserved)), rest, strict=False)}
    return [ranked[n] for n in sorted(kept)]


def _best_places(ranked: list[ResultItem], results: Sequence[Result], top_n: int) -> set[int]:
    """The place in ``ranked`` of each search's best-ranked item, for at most ``top_n``
    searches in the order of ``results``."""
    position = {id(item): n for n, item in enumerate(ranked)}
    reserved: set[int] = set()
    for result in results:
        found = [position[id(i)] for i in result.items if id(i) in position]
        if found and len(reserved) < top_n:
            reserved.add(min(found))
    return reserved


def _each_search_in(head: list[ResultItem], results: Sequence[Result]) -> bool:
    """Does ``head`` hold an item of every search that found something? Then its best
    is there too (``head`` is a prefix of the ranking), and the cut needs no
    reservation. The usual case, checked without a pass over every item: one search
    answered, or the searches' items interleave in the ranking. A search whose items
    all lost the merge to another's copies (none of them in the ranking) answers False
    here, and the full pass finds it has nothing to reserve."""
    kept = {id(item) for item in head}
    return all(not r.items or any(id(item) in kept for item in r.items) for r in results)
