"""A kb chunk keeps its document's lines (Markdown as written), so a reference's sentence
may wrap over two lines: it is still one sentence, and a quote of it is supported. A
blank line or a new Markdown block (a list item, a heading) still ends one."""

from __future__ import annotations

from agent_search.grounding import ground

TITLE = "Citations and prompt safety › Citation ids are unique across the whole request"
WRAPPED = ("One user request can run many searches: the create hook may call\n"
           "`ctx.search.kb(...)` twice, user messages can reference data sources, the\n"
           "automatic search runs web, kb and db searches in parallel, and the LLM may\n"
           "call search tools. All of them share one citation\n"
           "allocator that belongs to the request context, so the ids are `1`, `2`, `3` "
           "and so on\n"
           "without ever repeating. The reference implementation restarted ids at 1 for "
           "every hook\n"
           "call, so two different results could both be `#ref:1`; agent-search cannot do that.")
"""This project's own docs page as the demo's kb chunks it (the quote below was flagged
"at best 57% of its words" when every line was read as a sentence)."""
QUOTE = ("All of them share one citation allocator that belongs to the request context, so "
         "the ids are `1`, `2`, `3` and so on without ever repeating.")


def _statuses(answer: str, content: str) -> list[str]:
    refs = [{"citation_id": "1", "title": TITLE, "content": content}]
    return [g.status for g in ground(answer, refs)]


def test_a_quote_of_a_sentence_wrapped_over_lines_is_supported() -> None:
    assert _statuses(f"{QUOTE} #ref:1", WRAPPED) == ["supported"]
    assert _statuses(f"- {TITLE}: {QUOTE} #ref:1", WRAPPED) == ["supported"]


def test_list_items_are_still_sentences_of_their_own() -> None:
    content = "Settings:\n- the cache is kept for ten days\n- the index is rebuilt every night"
    # "kept for ten days and rebuilt every night" joins two items: no single item says it,
    # but each item alone is supported
    assert _statuses("The cache is kept for ten days. #ref:1", content) == ["supported"]
    assert _statuses("The index is rebuilt every night. #ref:1", content) == ["supported"]
    assert _statuses("The cache is kept for twenty days. #ref:1", content) == ["unsupported"]
