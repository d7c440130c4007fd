"""Prometheus metrics of one app (its own registry, so several apps in one process, as in
the tests, do not collide). Label values come from a closed set: a search type the
registry does not know is counted as ``other``, so callers cannot grow the label space.

The labelled children a search updates are looked up once and kept (``labels()`` checks
and locks on every call, a few times the cost of the update itself); the closed label set
bounds that cache too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from agent_search.grounding import summary

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    def __init__(self, search_types: Iterable[str]) -> None:
        self.registry = CollectorRegistry()
        self.known_types = frozenset(search_types)
        self.searches = Counter("agent_search_searches", "Searches run, by type and status",
                                ["type", "status"], registry=self.registry)
        self.search_seconds = Histogram("agent_search_search_duration_seconds",
                                        "Duration of one search", ["type"],
                                        buckets=_SECONDS, registry=self.registry)
        self.stream_seconds = Histogram("agent_search_stream_duration_seconds",
                                        "Duration of one stream (native or chat completion)",
                                        ["endpoint"], buckets=_SECONDS, registry=self.registry)
        self.ttft_seconds = Histogram("agent_search_time_to_first_token_seconds",
                                      "From request to the first text of the answer",
                                      ["endpoint"], buckets=_SECONDS, registry=self.registry)
        self.streams_in_flight = Gauge("agent_search_streams_in_flight",
                                       "Streams being served now", registry=self.registry)
        self.rate_limited = Counter("agent_search_rate_limited_requests",
                                    "Requests refused with 429", registry=self.registry)
        self.grounded_sentences = Counter(
            "agent_search_grounded_sentences", "Answer sentences by grounding status "
            "(supported, unsupported, no_claim)", ["status"], registry=self.registry)
        self._search_children: dict[tuple[str, bool], tuple[Any, Any]] = {}

    def search_type(self, search_type: str) -> str:
        return search_type if search_type in self.known_types else "other"

    def observe_search(self, search_type: str, error: str | None, duration_ms: float) -> None:
        label = self.search_type(search_type)
        key = (label, bool(error))
        children = self._search_children.get(key)
        if children is None:
            children = self._search_children[key] = (
                self.searches.labels(type=label, status="error" if error else "ok"),
                self.search_seconds.labels(type=label))
        count, seconds = children
        count.inc()
        seconds.observe(max(0.0, duration_ms) / 1000)

    def observe_grounding(self, grounding: Iterable[dict[str, Any]]) -> None:
        """The grounding summary of one answer: its sentences counted by status."""
        for status, count in summary(grounding).items():
            if count:
                self.grounded_sentences.labels(status=status).inc(count)

    def render(self) -> bytes:
        return generate_latest(self.registry)


__all__ = ["CONTENT_TYPE", "Metrics"]
