"""Prometheus metrics of one app (its own registry, so several apps in one process, as in
the tests, do not collide). Label values come from a closed set: a search type the
registry does not know is counted as ``other``, so callers cannot grow the label space.

The labelled children a search updates are looked up once and kept (``labels()`` checks
and locks on every call, a few times the cost of the update itself); the closed label set
bounds that cache too."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import anyio
from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from agent_search.cache import ResultCache
from agent_search.grounding import summary

_LAG_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
LAG_TICK_S = 0.05
"""How often the event loop's lag is sampled (:meth:`Metrics.watch_loop`)."""
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
        self.loop_lag_seconds = Histogram(
            "agent_search_event_loop_lag_seconds",
            "How late the event loop woke for a timer, sampled every 50 ms: time the loop "
            "spent on other work or waiting for the interpreter lock a thread held",
            buckets=_LAG_SECONDS, registry=self.registry)
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

    def watch_caches(self, caches: Iterable[ResultCache]) -> None:
        """Report the hits and misses of these result caches (read when scraped)."""
        self.registry.register(_CacheCollector(list(caches)))

    async def watch_loop(self, tick: float = LAG_TICK_S) -> None:
        """Observe the event loop's lag until cancelled: a sleep of ``tick`` seconds that
        wakes later than asked was held up by callbacks on the loop (a blocking call) or
        by a worker thread holding the interpreter lock (CPU work in Python, or a thread
        of low OS priority preempted while holding it). Every request served by this
        process waits as long, so the histogram says whether a load on the service costs
        the other clients on the loop or only in their own threads."""
        while True:
            began = time.perf_counter()
            await anyio.sleep(tick)
            self.loop_lag_seconds.observe(max(0.0, time.perf_counter() - began - tick))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _CacheCollector(Collector):
    """``agent_search_cache_hits_total`` / ``_misses_total`` by search type, summed over
    the searchers of the app (the shared one and each assistant's)."""

    def __init__(self, caches: list[ResultCache]) -> None:
        self.caches = caches

    def collect(self) -> Iterable[Metric]:
        hits = CounterMetricFamily("agent_search_cache_hits",
                                   "Searches answered by the result cache", labels=["type"])
        misses = CounterMetricFamily("agent_search_cache_misses",
                                     "Cacheable searches that called their handler",
                                     labels=["type"])
        totals: dict[str, list[int]] = {}
        for cache in self.caches:
            for search_type, stats in list(cache.stats.items()):
                total = totals.setdefault(search_type, [0, 0])
                total[0] += stats.hits
                total[1] += stats.misses
        for search_type, (hit, miss) in sorted(totals.items()):
            hits.add_metric([search_type], hit)
            misses.add_metric([search_type], miss)
        return [hits, misses]


__all__ = ["CONTENT_TYPE", "Metrics"]
