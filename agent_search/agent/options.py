"""Per-call options of :meth:`Assistant.stream` (the request level of the configuration)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Options:
    """What one ``stream()`` call asks for.

    ``search`` is the request-level switch of the spec's control table: ``True`` forces
    auto search on, ``False`` forces it off, ``None`` follows the assistant's config.
    ``connector`` overrides the assistant's LLM connector (``"offline"`` forces the
    offline responder). ``metadata`` is passed through to hooks untouched.
    """

    search: bool | None = None
    user_id: str | None = None
    team_id: str | None = None
    request_id: str | None = None
    connector: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    research: bool = False
    """Auto search as a research run (:mod:`agent_search.research`): rounds of searches
    until every part of the question is covered or a ``research`` budget is spent."""
