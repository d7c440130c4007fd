"""Chat model clients: OpenAI-compatible streaming, and the offline extractive responder."""

from agent_search.agent.llm.base import ChatClient, ChatEvent, LLMError, ToolCall, completion_text
from agent_search.agent.llm.offline import offline_answer, stream_offline_answer
from agent_search.agent.llm.openai import OpenAIChatClient

__all__ = [
    "ChatClient",
    "ChatEvent",
    "LLMError",
    "OpenAIChatClient",
    "ToolCall",
    "completion_text",
    "offline_answer",
    "stream_offline_answer",
]
