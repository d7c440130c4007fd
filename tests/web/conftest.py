"""Fixtures of the web tests: a real HTTP server on 127.0.0.1 that records each request
and answers with scripted responses (recorded provider payloads, errors, slow answers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..local_http import LocalServer, Reply, Responder, Seen

__all__ = ["SECRET", "LocalServer", "Reply", "Responder", "Seen", "recorded"]

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT.parent / "shared" / "data" / "web-search-api-responses"

SECRET = "sk-TESTSECRET-0123456789abcdef"
"""A distinctive API key: tests assert it never shows up in logs, events, traces, errors."""


def recorded(name: str) -> bytes:
    """A recorded provider payload, byte for byte (BOM included where it has one)."""
    return (RECORDED / name).read_bytes()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    s = LocalServer().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
