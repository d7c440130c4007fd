"""The HTTP service (``agent-search serve``): OpenAI-compatible chat completions with auto
search and citations, the native event stream, the search API, search records, health,
readiness and Prometheus metrics, and a static chat page.

```python
from agent_search.server import Service, ServiceOptions, create_app

app = create_app(Service.load(ServiceOptions(config_dir=Path("config"),
                                             assistants_dir=Path("assistants"))))
```

Names are imported on first use: the settings and the key ring (what ``agent-search
serve`` checks before it starts, and what a configuration with a ``server`` section
validates) do not bring in FastAPI; the app and the service do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.server._auth import Identity, KeyRing
    from agent_search.server.app import create_app
    from agent_search.server.service import Service, ServiceOptions
    from agent_search.server.settings import ApiKeyEntry, ServerSettings

__getattr__, __dir__ = lazy_exports(__name__, {
    "ApiKeyEntry": "settings", "Identity": "_auth", "KeyRing": "_auth",
    "ServerSettings": "settings", "Service": "service", "ServiceOptions": "service",
    "create_app": "app"})

__all__ = ["ApiKeyEntry", "Identity", "KeyRing", "ServerSettings", "Service",
           "ServiceOptions", "create_app"]
