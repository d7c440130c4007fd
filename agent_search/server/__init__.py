"""The HTTP service (``agent-search serve``): OpenAI-compatible chat completions with auto
search and citations, the native event stream, the search API, search records, health,
readiness and Prometheus metrics, and a static chat page.

```python
from agent_search.server import Service, ServiceOptions, create_app

app = create_app(Service.load(ServiceOptions(config_dir=Path("config"),
                                             assistants_dir=Path("assistants"))))
```
"""

from agent_search.server._auth import Identity, KeyRing
from agent_search.server.app import create_app
from agent_search.server.service import Service, ServiceOptions
from agent_search.server.settings import ApiKeyEntry, ServerSettings

__all__ = ["ApiKeyEntry", "Identity", "KeyRing", "ServerSettings", "Service",
           "ServiceOptions", "create_app"]
