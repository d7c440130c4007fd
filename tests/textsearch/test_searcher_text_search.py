"""SearcherTextSearch over handlers registered on a real Searcher."""

from __future__ import annotations

import pytest

from agent_search import ListSink, Searcher
from agent_search.textsearch import (
    DBTextSearch,
    KernelSearchResults,
    SearcherTextSearch,
    SearchOptions,
    TextSearchError,
    TextSearchResult,
    any_of,
    equal_to,
    where,
)
from agent_search.types import ResultItem

from ..support.corpus import CorpusHandler, Handlers

pytestmark = pytest.mark.anyio

QUERY = "What is the Semantic Kernel?"


async def test_three_methods_give_strings_text_results_and_native_items(
        searcher: Searcher) -> None:
    ts = SearcherTextSearch(searcher, "web")
    strings = await ts.search(QUERY, SearchOptions(top=2))
    texts = await ts.get_text_search_results(QUERY, SearchOptions(top=2))
    native = await ts.get_search_results(QUERY, SearchOptions(top=2))

    assert isinstance(strings, KernelSearchResults)
    got = [s async for s in strings.results]
    assert len(got) == 2 and all(isinstance(s, str) for s in got)
    assert "Semantic Kernel" in got[0]

    text_list = await texts.to_list()
    assert all(isinstance(t, TextSearchResult) for t in text_list)
    assert text_list[0].link and text_list[0].link.startswith("https://")
    assert text_list[0].name and text_list[0].value == got[0]
    assert isinstance(text_list[0].inner_content, ResultItem)

    items = await native.to_list()
    assert all(isinstance(i, ResultItem) for i in items)
    # results can be iterated again
    assert [i.url async for i in native.results] == [i.url for i in items]


async def test_citation_ids_come_from_the_context_allocator(searcher: Searcher) -> None:
    ts = SearcherTextSearch(searcher, "web")
    ctx = searcher.context()
    first = await ts.get_text_search_results(QUERY, {"top": 2}, ctx=ctx)
    second = await ts.get_text_search_results("Semantic Kernel GitHub", {"top": 2}, ctx=ctx)
    ids = [r.citation_id for r in first.items + second.items]
    assert all(ids)
    assert len(set(ids)) == len(ids)  # unique across the request
    assert ctx.citations.issued >= len(ids)


async def test_events_and_trace_flow_through_the_searcher(searcher: Searcher) -> None:
    sink = ListSink()
    ctx = searcher.context(events=sink)
    await SearcherTextSearch(searcher, "web").search(QUERY, ctx=ctx)
    kinds = [e.event for e in sink.events]
    assert kinds[0] == "search_start" and kinds[-1] == "search_complete"
    assert ctx.trace.find("search")


async def test_top_skip_and_total_count(searcher: Searcher, handlers: Handlers) -> None:
    ts = SearcherTextSearch(searcher, "web")
    everything = (await ts.get_search_results(QUERY, {"top": 10})).items
    page = await ts.get_search_results(QUERY, {"top": 2, "skip": 1,
                                               "include_total_count": True})
    assert [i.url for i in page.items] == [i.url for i in everything[1:3]]
    assert page.total_count == len(everything) == 4
    assert handlers.web.requests[-1].limit == 3  # top + skip fetched
    no_total = await ts.get_search_results(QUERY, {"top": 2})
    assert no_total.total_count is None


async def test_site_filter_becomes_request_sites(searcher: Searcher,
                                                 handlers: Handlers) -> None:
    ts = SearcherTextSearch(searcher, "web")
    res = await ts.get_text_search_results(
        QUERY, SearchOptions(top=5, filter=equal_to("site", "devblogs.microsoft.com")))
    assert handlers.web.requests[-1].sites == ["devblogs.microsoft.com"]
    links = [r.link for r in res.items]
    assert links and all("devblogs.microsoft.com" in (link or "") for link in links)

    either = any_of(equal_to("site", "github.com"), equal_to("site", "learn.microsoft.com"))
    await ts.search(QUERY, {"filter": either})
    assert handlers.web.requests[-1].sites == ["github.com", "learn.microsoft.com"]


async def test_unsupported_filter_field_or_operator_is_a_clear_error(
        searcher: Searcher, handlers: Handlers) -> None:
    ts = SearcherTextSearch(searcher, "web")
    with pytest.raises(TextSearchError, match=r"cannot filter on field 'author'.*'site'"):
        await ts.search(QUERY, {"filter": equal_to("author", "x")})
    with pytest.raises(TextSearchError, match=r"cannot filter 'site' with operator '>'"):
        await ts.search(QUERY, {"filter": where("site", ">", "a")})
    with pytest.raises(TextSearchError, match=r"time_range.*not one of"):
        await ts.search(QUERY, {"filter": equal_to("time_range", "decade")})
    with pytest.raises(TextSearchError, match="exclude every value"):
        await ts.search(QUERY, {"filter": equal_to("site", "a.com").equal_to("site", "b.com")})
    assert handlers.web.requests == []  # nothing ran


async def test_bad_query_and_options(searcher: Searcher) -> None:
    ts = SearcherTextSearch(searcher, "web")
    with pytest.raises(TextSearchError, match="must not be empty"):
        await ts.search("   ")
    with pytest.raises(TextSearchError, match="top"):
        await ts.search(QUERY, {"top": 0})
    with pytest.raises(TextSearchError, match="skip"):
        await ts.search(QUERY, {"skip": -1})
    with pytest.raises(TextSearchError, match=r"unknown_option|Extra inputs"):
        await ts.search(QUERY, {"unknown_option": 1})
    with pytest.raises(TextSearchError, match="query must be a string"):
        await ts.search(42)  # type: ignore[arg-type]


async def test_failed_search_raises_one_line_error(searcher: Searcher) -> None:
    searcher.registry.register(CorpusHandler("broken", [], fail="backend down"))
    with pytest.raises(TextSearchError, match="backend down"):
        await SearcherTextSearch(searcher, "broken").search(QUERY)
    with pytest.raises(TextSearchError, match="unsupported search type: nope"):
        await SearcherTextSearch(searcher, "nope").search(QUERY)


async def test_multi_source_merges_and_type_filter_picks_sources(
        searcher: Searcher, handlers: Handlers) -> None:
    ts = SearcherTextSearch(searcher)  # every registered type
    res = await ts.get_search_results("search retrieval rock semantic kernel",
                                      {"top": 20, "include_total_count": True})
    types = {i.type for i in res.items}
    assert types == {"web", "kb", "db"}
    scores = [i.final_score for i in res.items]
    assert scores == sorted(scores, reverse=True)  # merged and reranked
    singles = [await SearcherTextSearch(searcher, t).get_search_results(
        "search retrieval rock semantic kernel", {"include_total_count": True})
        for t in ("web", "kb", "db")]
    assert res.total_count == sum(s.total_count or 0 for s in singles)
    ids = [i.citation_id for i in res.items]
    assert len(set(ids)) == len(ids)

    with pytest.raises(TextSearchError, match="filter 'type' takes '=' or 'in', not '!='"):
        await ts.search("kernel", {"filter": where("type", "!=", "kb")})
    with pytest.raises(TextSearchError, match="ftp not searched here"):
        await ts.search("kernel", {"filter": equal_to("type", "ftp")})
    kb_only = await ts.get_search_results("search retrieval", {"filter": equal_to("type", "kb")})
    assert {i.type for i in kb_only.items} == {"kb"}
    with pytest.raises(TextSearchError, match="cannot filter on field 'author'"):
        # kb and db take any metadata/column field, web does not: not common to all
        await ts.search("kernel", {"filter": equal_to("author", "ana")})
    kb_author = await ts.get_search_results("search retrieval", {
        "filter": equal_to("type", "kb").equal_to("author", "ana")})
    sent = handlers.kb.requests[-1]
    assert [(w.field, w.op, w.value) for w in sent.wheres] == [("author", "=", "ana")]
    assert [i.document_id for i in kb_author.items] == ["hybrid.md"]
    web_site = await ts.search("kernel", {
        "filter": equal_to("type", "web").equal_to("site", "github.com")})
    assert len(web_site) == 1


async def test_multi_source_reports_partial_failures(searcher: Searcher) -> None:
    searcher.registry.register(CorpusHandler("broken", [], fail="backend down"))
    ts = SearcherTextSearch(searcher, ["web", "broken"])
    res = await ts.search(QUERY)
    assert len(res) > 0
    assert any("backend down" in w for w in res.metadata["warnings"])
    searcher.registry.register(CorpusHandler("broken2", [], fail="disk full"))
    with pytest.raises(TextSearchError, match="broken: backend down; broken2: disk full"):
        await SearcherTextSearch(searcher, ["broken", "broken2"]).search(QUERY)


async def test_request_defaults_and_reserved_keys(searcher: Searcher,
                                                  handlers: Handlers) -> None:
    ts = SearcherTextSearch(searcher, "kb", request={"collections": ["notes"],
                                                     "source": "hook"})
    res = await ts.get_search_results("search")
    assert handlers.kb.requests[-1].collections == ["notes"]
    assert all(i.source == "hook" for i in res.items)
    with pytest.raises(TextSearchError, match="may not set limit"):
        SearcherTextSearch(searcher, "kb", request={"limit": 3})


async def test_db_text_search_models_and_column_filters(searcher: Searcher,
                                                        handlers: Handlers) -> None:
    db = DBTextSearch(searcher, ["artists"])
    texts = await db.get_text_search_results("rock band", {"top": 5})
    assert [t.name for t in texts.items] == ["AC/DC", "Accept"]
    assert texts.items[0].link == "artists/1"
    rows = await db.get_records("rock", {"filter": equal_to("Genre", "Metal")})
    assert rows.items == [{"model": "artists", "ArtistId": 2, "Name": "Accept",
                           "Genre": "Metal"}]
    sent = handlers.db.requests[-1]
    assert [(w.field, w.op, w.value) for w in sent.wheres] == [("Genre", "=", "Metal")]
    await db.search("rock", {"filter": equal_to("model", "albums")})
    assert handlers.db.requests[-1].models == ["albums"]
