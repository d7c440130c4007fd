from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_search import QueryWhere, Request, Result, ResultItem
from agent_search.types import normalize_operator


def test_request_defaults_and_normalisation() -> None:
    r = Request(type=" KB ", query="  what is qdrant  ")
    assert r.type == "kb"
    assert r.query == "what is qdrant"
    assert r.limit is None and r.source == "user" and r.graph is False


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_rejected_with_a_clear_message(query: str) -> None:
    with pytest.raises(ValidationError, match="query must not be empty"):
        Request(type="web", query=query)


@pytest.mark.parametrize("limit", [0, -1, 10_001])
def test_limit_outside_range(limit: int) -> None:
    with pytest.raises(ValidationError, match=f"limit {limit} is outside"):
        Request(type="web", query="x", limit=limit)


@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_threshold_outside_0_1(threshold: float) -> None:
    with pytest.raises(ValidationError, match=r"threshold .* is outside 0..1"):
        Request(type="kb", query="x", threshold=threshold)


def test_overlong_query_names_the_limit() -> None:
    with pytest.raises(ValidationError, match="the limit is 16384"):
        Request(type="kb", query="a" * 20_000)


def test_unknown_operator_is_named() -> None:
    with pytest.raises(ValidationError, match="unknown operator '~='"):
        Request(type="db", query="x", wheres=[{"field": "a", "op": "~=", "value": 1}])


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [("eq", "="), ("GTE", ">="), ("<>", "!="), ("not_in", "not in"), ("null", "is null")],
)
def test_operator_aliases(alias: str, canonical: str) -> None:
    assert normalize_operator(alias) == canonical


def test_where_groups_nest_and_round_trip() -> None:
    w = QueryWhere.model_validate(
        {
            "or": [
                {"field": "a", "value": 1},
                {
                    "and": [
                        {"field": "b", "op": ">", "value": 2},
                        {"field": "c", "op": "in", "value": [1]},
                    ]
                },
            ]
        }
    )
    assert w.is_group and w.or_ is not None and w.or_[1].and_ is not None
    assert w.to_json()["or"][1]["and"][0] == {"field": "b", "op": ">", "value": 2}


@pytest.mark.parametrize(
    "bad",
    [
        {"field": "a", "value": 1, "or": [{"field": "b", "value": 2}]},
        {"or": []},
        {"op": "="},
        {"field": "a", "op": "in", "value": 3},
        {"field": "a", "op": "between", "value": [1]},
    ],
)
def test_malformed_wheres(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        QueryWhere.model_validate(bad)


def test_unknown_request_field_is_rejected() -> None:
    with pytest.raises(ValidationError, match="collection"):
        Request.model_validate({"type": "kb", "query": "x", "collection": "docs"})


def test_result_json_has_the_contract_fields() -> None:
    r = Result(type="web", query="q", items=[ResultItem(title="t", content="c", url="u")])
    data = r.to_json()
    for key in ("type", "query", "source", "items", "total", "duration_ms", "error", "graph_nodes"):
        assert key in data
    item = data["items"][0]
    for key in (
        "citation_id",
        "type",
        "title",
        "content",
        "url",
        "score",
        "source",
        "weight",
        "document_id",
        "collection",
        "model",
        "record_id",
        "data",
        "metadata",
    ):
        assert key in item


def test_final_score_multiplies_weight_and_rerank() -> None:
    item = ResultItem(score=0.5, weight=0.8)
    assert item.final_score == pytest.approx(0.4)
    item.rerank_score = 0.5
    assert item.final_score == pytest.approx(0.2)
