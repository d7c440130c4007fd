"""Fixtures of the web tests. The ``server`` fixture (tests/conftest.py) is a real HTTP
server on 127.0.0.1 that records each request and answers with scripted responses
(recorded provider payloads, errors, slow answers)."""

from __future__ import annotations

import pytest

from ..support.local_http import LocalServer, Reply, Responder, Seen, recorded

__all__ = ["SECRET", "LocalServer", "Reply", "Responder", "Seen", "recorded"]

SECRET = "sk-TESTSECRET-0123456789abcdef"
"""A distinctive API key: tests assert it never shows up in logs, events, traces, errors."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
