"""A trace tree per request: one node per search, children per stage.

Stages (``embedding``, ``vector_search``, ``graph_search``, ``dsl_build``, ``db_query``,
``rerank``...) open a child of the *current* node with :func:`span`. The current node is a
context variable, so concurrent searches (separate tasks) each nest under their own node.

When ``opentelemetry-api`` is installed every node is also an OpenTelemetry span; without
it this costs nothing more.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

try:  # optional dependency
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover - exercised where the extra is absent
    _otel_trace = None  # type: ignore[assignment]

_tracer_cache: tuple[Any, Any] = (None, None)


def _otel_tracer() -> Any:
    """The OpenTelemetry tracer, or None while no SDK tracer provider is installed.

    With only the API installed every span would be a no-op that still costs
    microseconds per stage, so spans are skipped until an application sets a provider.
    """
    global _tracer_cache
    if _otel_trace is None:
        return None
    provider = _otel_trace.get_tracer_provider()
    if provider is _tracer_cache[0]:
        return _tracer_cache[1]
    name = type(provider).__name__
    tracer = None if name in ("ProxyTracerProvider", "NoOpTracerProvider") else (
        provider.get_tracer("agent_search"))
    _tracer_cache = (provider, tracer)
    return tracer


@dataclass(slots=True)
class TraceNode:
    name: str
    attributes: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    error: str | None = None
    start: float = field(default_factory=time.perf_counter)
    end: float | None = None
    children: list[TraceNode] = field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        end = self.end if self.end is not None else time.perf_counter()
        return (end - self.start) * 1000.0

    def child(self, name: str, **attributes: Any) -> TraceNode:
        node = TraceNode(name, dict(attributes))
        self.children.append(node)
        return node

    def finish(self, status: str = "success", error: str | None = None) -> None:
        if self.end is None:
            self.end = time.perf_counter()
            self.status = status
            self.error = error

    def find(self, name: str) -> list[TraceNode]:
        """All nodes called ``name`` in this subtree, depth first."""
        found = [self] if self.name == name else []
        for c in self.children:
            found.extend(c.find(name))
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "duration_ms": round(self.duration_ms, 3),
            "error": self.error,
            "attributes": self.attributes,
            "children": [c.to_dict() for c in self.children],
        }


_current: ContextVar[TraceNode | None] = ContextVar("agent_search_trace", default=None)


def current_node() -> TraceNode | None:
    return _current.get()


class activate:  # lower-case: used like a function, `with activate(node):`
    """Make ``node`` the parent of spans opened in this task until the block ends.

    A class rather than a generator-based context manager: it is entered once per
    search on the hot path, and this form costs a fraction of the generator's.
    """

    __slots__ = ("_node", "_token")

    def __init__(self, node: TraceNode) -> None:
        self._node = node
        self._token: Token[TraceNode | None] | None = None

    def __enter__(self) -> TraceNode:
        self._token = _current.set(self._node)
        return self._node

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _current.reset(self._token)


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[TraceNode]:
    """Time a stage as a child of the current node (a detached node when there is none).

    The node is marked ``failed`` with the error's first line if the block raises, and
    ``cancelled`` if it is cancelled; the exception propagates unchanged.
    """
    parent = _current.get()
    node = parent.child(name, **attributes) if parent is not None else TraceNode(name, attributes)
    token = _current.set(node)
    tracer = _otel_tracer()
    otel_cm: Any = (
        tracer.start_as_current_span(f"search.{name}", attributes=_otel_attrs(attributes))
        if tracer is not None
        else contextlib.nullcontext()
    )
    try:
        with otel_cm as otel_span:
            try:
                yield node
            except BaseException as exc:
                cancelled = not isinstance(exc, Exception)
                node.finish("cancelled" if cancelled else "failed", first_line(exc))
                if otel_span is not None and not cancelled:
                    otel_span.record_exception(exc)
                raise
            else:
                # a stage may have marked itself failed without raising (e.g. a rerank
                # that kept the items); otherwise it succeeded
                node.finish("success" if node.status == "running" else node.status, node.error)
            finally:
                if otel_span is not None:
                    for k, v in _otel_attrs(node.attributes).items():
                        otel_span.set_attribute(k, v)
                    otel_span.set_attribute("status", node.status)
    finally:
        _current.reset(token)


def _otel_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if isinstance(v, str | int | float | bool)}


def message_line(exc: BaseException) -> str:
    """The first line of the exception's message ("" when it has none)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


def first_line(exc: BaseException) -> str:
    """``ExcType: first line of the message`` — one line, for Result.error and traces."""
    msg = message_line(exc)
    name = type(exc).__name__
    return f"{name}: {msg}" if msg else name
