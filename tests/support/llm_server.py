"""The scripted OpenAI-compatible chat server the tests use: it lives in
:mod:`agent_search.testing.chat_server` (the benchmarks run it too); this module keeps the
tests' import path."""

from agent_search.testing.chat_server import (
    SCRIPTS,
    ChatServer,
    ThreadedChatServer,
    long_answer,
    sse_chunk,
)

__all__ = ["SCRIPTS", "ChatServer", "ThreadedChatServer", "long_answer", "sse_chunk"]
