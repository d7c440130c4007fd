"""Filters as data, the KB text search's mapping and record types, prompt templates."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agent_search import Searcher
from agent_search.textsearch import (
    DEFAULT_RAG_TEMPLATE,
    FilterError,
    FilterSupport,
    KBTextSearch,
    PromptTemplate,
    SearcherTextSearch,
    TemplateRenderError,
    TextSearchError,
    TextSearchFilter,
    TextSearchResult,
    all_of,
    any_of,
    create_search_plugin,
    equal_to,
    where,
)
from agent_search.textsearch.request_filters import WEB_FILTER

from ..support.corpus import Handlers

# -- filters -----------------------------------------------------------------------------


def test_filters_are_json_data_and_round_trip() -> None:
    f = all_of(equal_to("collection", "docs"),
               any_of(equal_to("lang", "en"), equal_to("lang", "fr")), None)
    data = f.to_json()
    assert data == [
        {"field": "collection", "op": "=", "value": "docs"},
        {"or": [{"field": "lang", "op": "=", "value": "en"},
                {"field": "lang", "op": "=", "value": "fr"}]},
    ]
    assert TextSearchFilter.from_json(data).to_json() == data
    assert f.fields() == {"collection", "lang"}


def test_bad_filters_name_the_problem() -> None:
    with pytest.raises(FilterError, match="unknown operator 'contains'"):
        where("site", "contains", "x")
    with pytest.raises(FilterError, match="needs a list value"):
        where("site", "in", "x")
    with pytest.raises(FilterError, match="invalid filter"):
        TextSearchFilter.from_json({"field": "a", "or": []})
    with pytest.raises(FilterError, match="empty filter"):
        any_of(TextSearchFilter())


def test_support_declares_fields_operators_and_groups() -> None:
    support = FilterSupport.of("my search", {"tag": ["eq", "in"]})
    support.check(equal_to("tag", "a"))
    support.check(where("tag", "in", ["a", "b"]))
    with pytest.raises(FilterError, match="my search cannot filter on field 'lang'; "
                                          "supported: 'tag' \\(=, in\\)"):
        support.check(equal_to("lang", "en"))
    with pytest.raises(FilterError, match="does not support OR groups"):
        support.check(any_of(equal_to("tag", "a"), equal_to("tag", "b")))


def test_web_filter_translation() -> None:
    fields: dict[str, object] = {}
    f = any_of(equal_to("site", "a.com"), where("site", "in", ["b.com", "c.com"]))
    f.equal_to("time_range", "week")
    WEB_FILTER.support.check(f)
    WEB_FILTER.apply(f, fields)
    assert fields == {"options": {"sites": ["a.com", "b.com", "c.com"], "time_range": "week"}}
    with pytest.raises(FilterError, match="one field"):
        WEB_FILTER.apply(any_of(equal_to("site", "a.com"), equal_to("time_range", "day")), {})
    for bad in ("a.com OR site:b.com", "a.com\nignore", '"a.com"', "-a.com", ""):
        with pytest.raises(FilterError, match="filter 'site'"):
            WEB_FILTER.apply(equal_to("site", bad), {})
    ok: dict[str, object] = {}
    WEB_FILTER.apply(where("site", "in", ["https://learn.microsoft.com/en-us/",
                                          "localhost:8080", "xn--bcher-kva.example"]), ok)
    assert ok["options"]["sites"] == ["https://learn.microsoft.com/en-us/", "localhost:8080",
                           "xn--bcher-kva.example"]
    narrowed: dict[str, object] = {}
    WEB_FILTER.apply(where("site", "in", ["a.com", "b.com"]).equal_to("site", "b.com"),
                     narrowed)
    assert narrowed == {"options": {"sites": ["b.com"]}}


# -- knowledge base ----------------------------------------------------------------------


class DocRecord(BaseModel):
    title: str
    content: str
    source_url: str | None = None
    author: str
    document_id: str


@pytest.mark.anyio
async def test_kb_custom_record_type_and_field_mapping(searcher: Searcher,
                                                       handlers: Handlers) -> None:
    kb = KBTextSearch(searcher, ["docs"], record_type=DocRecord, name_field="author",
                      value_field="content", link_field="source_url", mode="dense")
    records = await kb.get_search_results("hybrid search retrieval")
    assert all(isinstance(r, DocRecord) for r in records.items)
    assert records.items[0].document_id == "hybrid.md"
    assert handlers.kb.requests[-1].options == {"collections": ["docs"], "mode": "dense"}

    ctx = searcher.context()
    texts = await kb.get_text_search_results("hybrid search retrieval", ctx=ctx)
    first = texts.items[0]
    assert (first.name, first.link) == ("ana", "file:///docs/hybrid.md")
    assert first.value.startswith("Hybrid search fuses")
    assert first.citation_id == "1"
    assert isinstance(first.inner_content, DocRecord)
    strings = await kb.search("citation ids")
    assert strings.items[0] == "Citation ids are unique across the whole request."


@pytest.mark.anyio
async def test_kb_without_record_type_maps_item_and_metadata_fields(
        searcher: Searcher) -> None:
    kb = KBTextSearch(searcher, name_field="document_id", link_field="metadata.source_url")
    texts = await kb.get_text_search_results("search notes retrieval", {"top": 5})
    by_name = {t.name: t for t in texts.items}
    assert by_name["hybrid.md"].link == "file:///docs/hybrid.md"
    # no source_url in the notes' metadata: the link falls back to collection/document
    assert by_name["n1.md"].link == "notes/n1.md"
    narrowed = await kb.get_text_search_results("search", {"filter": equal_to("collection",
                                                                              "notes")})
    assert [t.name for t in narrowed.items] == ["n1.md"]


@pytest.mark.anyio
async def test_kb_mapping_errors_are_clear(searcher: Searcher) -> None:
    with pytest.raises(TextSearchError, match="value_field 'text' is not a field of DocRecord"):
        KBTextSearch(searcher, record_type=DocRecord, value_field="text")
    with pytest.raises(TextSearchError, match="mode 'fuzzy'"):
        KBTextSearch(searcher, mode="fuzzy")

    class Strict(BaseModel):
        title: str
        content: str
        rating: int

    kb = KBTextSearch(searcher, ["notes"], record_type=Strict)
    with pytest.raises(TextSearchError, match=r"notes/n1\.md does not fit Strict: rating"):
        await kb.get_search_results("search notes")


@pytest.mark.anyio
async def test_kb_result_mapper_overrides_mapping(searcher: Searcher) -> None:
    kb = KBTextSearch(searcher, ["docs"], record_type=DocRecord,
                      result_mapper=lambda r: TextSearchResult(name=r.title.upper(),
                                                               value=r.author))
    texts = await kb.get_text_search_results("hybrid")
    assert (texts.items[0].name, texts.items[0].value) == ("HYBRID SEARCH", "ana")
    assert texts.items[0].citation_id  # still citable


# -- prompt templates --------------------------------------------------------------------


@pytest.mark.anyio
async def test_template_calls_plugin_functions_while_rendering(searcher: Searcher) -> None:
    plugin = create_search_plugin(SearcherTextSearch(searcher, "web"))
    template = PromptTemplate(
        "{% for r in SearchPlugin.GetTextSearchResults(query, count=3) %}"
        "Name: {{ r.name }}\nValue: {{ r.value }}\nLink: {{ r.link }}\n-----\n"
        "{% endfor %}\n{{ query }}\n")
    ctx = searcher.context()
    prompt = await template.render(plugins=[plugin], ctx=ctx,
                                   query="What is the Semantic Kernel?")
    assert prompt.count("Name: ") == 3
    assert "Link: https://devblogs.microsoft.com/semantic-kernel/hello-world/" in prompt
    assert prompt.endswith("What is the Semantic Kernel?\n")
    assert ctx.citations.issued == 3


@pytest.mark.anyio
async def test_default_rag_template_over_results(searcher: Searcher) -> None:
    texts = await SearcherTextSearch(searcher, "web").get_text_search_results(
        "Semantic Kernel GitHub", {"top": 1})
    prompt = await PromptTemplate(DEFAULT_RAG_TEMPLATE).render(
        results=[t.to_json() for t in texts.items], query="q?")
    assert prompt.startswith("Name: microsoft/semantic-kernel\n")
    assert "Include citations" in prompt


@pytest.mark.anyio
async def test_template_errors_and_sandbox(searcher: Searcher) -> None:
    with pytest.raises(TemplateRenderError, match="undefined"):
        await PromptTemplate("{{ missing }}").render()
    with pytest.raises(TemplateRenderError, match="invalid prompt template"):
        PromptTemplate("{% for %}")
    with pytest.raises(TemplateRenderError):
        await PromptTemplate("{{ ''.__class__.__mro__ }}").render()
    # search results are inserted as text, never run as template code
    plugin = create_search_plugin(SearcherTextSearch(searcher, "web"))
    out = await PromptTemplate("{{ x }}").render(plugins=[plugin], x="{{ 7 * 7 }}")
    assert out == "{{ 7 * 7 }}"
    with pytest.raises(TemplateRenderError, match="shadow a plugin"):
        await PromptTemplate("{{ SearchPlugin }}").render(plugins=[plugin], SearchPlugin=1)
