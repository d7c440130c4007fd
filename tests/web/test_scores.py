"""Web scores on the project's absolute scale (0..1, ~0.5 = probably relevant): the
provider's own score where it has a calibrated one (Tavily, an MCP tool's ``score``),
else the rank, the same for every provider; and the link screening of items."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest

from agent_search._links import safe_url, url_problem
from agent_search.web import WebSettings, create_provider
from agent_search.web._normalize import ANSWER_SCORE, provider_score, rank_score
from agent_search.web.providers import SearchParams, WebProvider

from ..support.local_http import SECRET, recorded

RANK_PROVIDERS = {"bing": "bing_what_is_the_semantic_kernel.json",
                  "brave": "brave_what_is_the_semantic_kernel.json",
                  "google": "google_what_is_the_semantic_kernel.json"}


def provider(name: str, **extra: Any) -> WebProvider:
    if name == "google":
        extra.setdefault("cx", "cx-id")
    return create_provider(WebSettings(provider=name, base_url="http://127.0.0.1:9",
                                       **{name: extra}), api_key=SECRET)


def payload(file: str) -> Any:
    return json.loads(recorded(file).decode("utf-8-sig"))


def test_rank_scores_start_at_0_8_and_reach_one_half_at_rank_10() -> None:
    scores = [rank_score(r) for r in range(1, 51)]
    assert scores[0] == 0.8
    assert scores[1] == 0.76
    assert scores[9] == pytest.approx(0.5, abs=0.01)
    assert scores[19] == pytest.approx(0.3, abs=0.01)
    assert all(a > b > 0 for a, b in itertools.pairwise(scores))
    assert rank_score(0) == rank_score(-5) == 0.8  # a position below 1 is the first
    assert 0 <= rank_score(10**9) == rank_score(10**6) < 0.01  # bounded, no overflow


@pytest.mark.parametrize(("value", "expected"), [
    (0.93, 0.93), (1, 1.0), (0, 0.0), (1.7, 1.0), (-0.2, 0.0)])
def test_a_provider_score_is_kept_on_the_scale(value: Any, expected: float) -> None:
    assert provider_score(value, 3) == expected


@pytest.mark.parametrize("value", [None, "0.9", True, math.nan, math.inf, [0.9], {"s": 1}])
def test_an_unusable_provider_score_falls_back_to_the_rank(value: Any) -> None:
    assert provider_score(value, 3) == rank_score(3)


@pytest.mark.parametrize("name", sorted(RANK_PROVIDERS))
def test_ranking_providers_score_by_rank_whatever_the_limit(name: str) -> None:
    p = provider(name)
    raw = payload(RANK_PROVIDERS[name])
    many = p.parse(raw, SearchParams("q", limit=10))
    few = p.parse(raw, SearchParams("q", limit=2))
    assert [i.score for i in many] == [rank_score(r) for r in range(1, len(many) + 1)]
    assert [i.score for i in few[:2]] == [i.score for i in many[:2]]


def test_google_later_pages_continue_the_rank() -> None:
    raw = payload("google_what_is_the_semantic_kernel.json")
    raw["queries"]["request"][0]["startIndex"] = 11
    items = provider("google").parse(raw, SearchParams("q"))
    assert items[0].score == rank_score(11)
    assert items[0].metadata["position"] == 11


def test_tavily_keeps_its_own_score_and_ranks_a_result_without_one() -> None:
    raw = payload("tavily_what_is_the_semantic_kernel.json")
    expected = [r["score"] for r in raw["results"]]
    del raw["results"][1]["score"]
    raw["results"][2]["score"] = "high"
    items = provider("tavily", include_answer=False).parse(raw, SearchParams("q"))
    assert items[0].score == pytest.approx(expected[0])
    assert items[1].score == rank_score(2)  # was 0.0 before: under any floor
    assert items[2].score == rank_score(3)
    assert items[3].score == pytest.approx(expected[3])


def test_answers_score_above_the_first_result_but_below_certainty() -> None:
    raw = {"answerBox": {"title": "SK", "answer": "An SDK.", "link": "https://a.example/"},
           "organic": [{"title": "t", "link": "https://b.example/", "snippet": "s",
                        "position": 1}]}
    answer, first = provider("serper").parse(raw, SearchParams("what is sk"))
    assert answer.metadata["kind"] == "answer_box"
    assert answer.score == ANSWER_SCORE
    assert rank_score(1) < ANSWER_SCORE < 1.0
    assert first.score == rank_score(1)


def test_searxng_relative_scores_do_not_leak_onto_the_scale() -> None:
    """SearXNG's scores are sums over engines, comparable only within one answer: the
    same page must not score 1.0 in one answer and 0.25 in another."""
    p = provider("searxng")
    alone = p.parse({"results": [{"url": "https://a.example/", "title": "a", "score": 0.3}]},
                    SearchParams("q"))
    beside = p.parse({"results": [{"url": "https://b.example/", "title": "b", "score": 9.0},
                                  {"url": "https://a.example/", "title": "a", "score": 0.3}]},
                     SearchParams("q"))
    assert alone[0].score == rank_score(1)
    assert beside[1].score == rank_score(2)


def test_serper_positions_that_are_not_plausible_numbers_use_the_order() -> None:
    organic = [{"title": str(i), "link": f"https://x.example/{i}", "position": pos}
               for i, pos in enumerate(["7", -3, 10**12, True, 4], start=1)]
    items = provider("serper", include_answer=False).parse({"organic": organic},
                                                           SearchParams("q"))
    assert [i.metadata["position"] for i in items] == [1, 2, 3, 4, 4]
    assert [i.score for i in items] == [rank_score(p) for p in (1, 2, 3, 4, 4)]


def test_malformed_entries_are_skipped_not_fatal() -> None:
    raw = {"web": {"results": ["not an object", None,
                               {"title": "ok", "url": "https://ok.example/",
                                "extra_snippets": "not a list"}]}}
    [item] = provider("brave").parse(raw, SearchParams("q"))
    assert item.url == "https://ok.example/" and "extra_snippets" not in item.metadata


# -- links ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "https://example.com/", "http://example.com:8080/a?b=c#d", "HTTPS://EXAMPLE.COM",
    "https://例え.jp/パス", "http://[2001:db8::1]/", "  https://padded.example/  "])
def test_links_kept(url: str) -> None:
    assert url_problem(url) is None
    assert safe_url(url) == url.strip()


@pytest.mark.parametrize(("url", "reason"), [
    ("javascript:alert(1)", "scheme 'javascript' is not http or https"),
    ("mailto:a@b.example", "scheme 'mailto' is not http or https"),
    ("example.com/page", "no scheme"),
    ("https:///path", "no host"),
    ("https://u@example.com/", "credentials in the URL"),
    ("https://example.com/a b", "contains the character U+0020"),
    ("https://example.com/\u2029x", "contains the character U+2029"),
    ("https://example.com/\u200e", "contains the character U+200E"),
    ("https://example.com:0x50/", "not a valid URL"),
    ("https://example.com/" + "a" * 5000, "longer than 4096 characters"),
    (12, "not a string (int)"),
])
def test_links_refused_with_a_reason(url: Any, reason: str) -> None:
    assert url_problem(url) == reason
    assert safe_url(url) is None


def test_link_metadata_is_screened_too() -> None:
    raw = {"results": [{"title": "t", "url": "https://a.example/", "score": 0.9,
                        "favicon": "javascript:alert(1)"}]}
    [item] = provider("tavily", include_answer=False).parse(raw, SearchParams("q"))
    assert "favicon" not in item.metadata
    organic = [{"title": "t", "link": "https://a.example/", "position": 1, "sitelinks": [
        {"title": "ok", "link": "https://a.example/x"}, {"title": "bad", "link": "data:,x"}]}]
    [item] = provider("serper", include_answer=False).parse({"organic": organic},
                                                            SearchParams("q"))
    assert item.metadata["sitelinks"] == [{"title": "ok", "link": "https://a.example/x"}]
