"""Grounding one answer against one reference, for the tests that judge a sentence."""

from __future__ import annotations

from agent_search.grounding import ground


def verdict(answer: str, reference: str) -> str:
    """The status of the one sentence of ``answer`` (citing ``#ref:1``) grounded against
    ``reference`` as citation 1."""
    (g,) = ground(answer, [{"citation_id": "1", "title": "", "content": reference}])
    return g.status
