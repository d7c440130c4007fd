"""The offline extractive responder."""

from __future__ import annotations

from agent_search.agent import offline_answer
from agent_search.types import ResultItem


def test_cites_top_references_and_says_it_is_offline() -> None:
    items = [ResultItem(citation_id="4", title="Doc A", content=(
                 "Unrelated opening sentence. The battery lasts 30 hours on one charge. "
                 "Another unrelated line.")),
             ResultItem(citation_id="9", title="Row", content="Wireless headphones X1.",
                        model="product", record_id=1,
                        data={"id": 1, "name": "X1", "price": 49.5, "stock": 3,
                              "__yao_team": "t1", "description": "long text"})]
    text = offline_answer("How long does the battery last?", items, reason="no connector")
    assert text.startswith("I am offline (no connector)")
    assert "The battery lasts 30 hours on one charge. #ref:4" in text
    assert "Unrelated opening" not in text
    assert "(price: 49.5, stock: 3) #ref:9" in text
    assert "__yao_team" not in text and "long text" not in text


def test_no_references() -> None:
    text = offline_answer("q", [], reason="r")
    assert "found no relevant reference" in text


def test_custom_marker_format() -> None:
    text = offline_answer("q", [ResultItem(citation_id="2", title="T", content="Fact.")],
                          reason="r", fmt="[{id}]")
    assert "Fact. [2]" in text
