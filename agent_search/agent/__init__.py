"""The agent runtime that uses the search module: assistants, hooks with ``ctx.search``,
``stream()`` with auto search, user data sources, LLM clients, citations, delegation and
search records.

```python
from agent_search.agent import Assistant, Options

assistant = Assistant.load("assistants/demo")
async with assistant.run_stream([{"role": "user", "content": "..."}], Options()) as events:
    async for event in events:
        print(event.to_dict())
```
"""

from agent_search.agent._conversation import validate_conversation
from agent_search.agent._followup import Reading, read_conversation
from agent_search.agent._hook_api import HookContext, HookSearch
from agent_search.agent._hooks import HookResponse
from agent_search.agent.assistant import Assistant
from agent_search.agent.llm import ChatEvent, LLMError, OpenAIChatClient, offline_answer
from agent_search.agent.options import Options
from agent_search.agent.package import AssistantPackage, load_package
from agent_search.agent.records import RecordSink, RecordStore, SearchRecord
from agent_search.agent.settings import AgentSettings, ConnectorSettings

__all__ = [
    "AgentSettings",
    "Assistant",
    "AssistantPackage",
    "ChatEvent",
    "ConnectorSettings",
    "HookContext",
    "HookResponse",
    "HookSearch",
    "LLMError",
    "OpenAIChatClient",
    "Options",
    "Reading",
    "RecordSink",
    "RecordStore",
    "SearchRecord",
    "load_package",
    "offline_answer",
    "read_conversation",
    "validate_conversation",
]
