from __future__ import annotations

import pytest

from agent_search import Request, Searcher, span
from agent_search.events import SearchStart, StreamSink
from agent_search.trace import TraceNode, activate

from ..support.handlers import StaticHandler, web_items


def test_span_records_failure_and_reraises() -> None:
    root = TraceNode("root")
    with activate(root), pytest.raises(ValueError), span("db_query"):
        raise ValueError("bad sql\nmore")
    (node,) = root.children
    assert node.status == "failed" and node.error == "ValueError: bad sql"
    assert node.end is not None and node.duration_ms >= 0


def test_span_without_a_parent_is_detached() -> None:
    with span("embedding") as node:
        pass
    assert node.status == "success"


def test_spans_are_exported_to_opentelemetry() -> None:
    otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace as otel_trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = otel_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_trace.set_tracer_provider(provider)  # once per process, as an application would
    with span("vector_search", collection="docs"):
        pass
    (exported,) = exporter.get_finished_spans()
    assert exported.name == "search.vector_search"
    assert exported.attributes is not None and exported.attributes["collection"] == "docs"


@pytest.mark.anyio
async def test_stream_sink_delivers_events_in_order() -> None:
    sink = StreamSink()
    s = Searcher()
    s.registry.register(StaticHandler("web", web_items(2)))
    await s.search(Request(type="web", query="q"), ctx=s.context(events=sink))
    sink.close()
    kinds = [e.event async for e in sink.receive]
    assert kinds == ["search_start", "search_result", "search_result", "search_complete"]


def test_event_dicts_have_event_and_request_id() -> None:
    d = SearchStart("r1", "s1", "web", "q").to_dict()
    assert d == {
        "event": "search_start",
        "request_id": "r1",
        "id": "s1",
        "type": "web",
        "query": "q",
    }
