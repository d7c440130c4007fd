"""The typed settings of the ``web`` configuration section.

``SearchConfig.web`` keeps unknown keys; :class:`WebSettings` validates all of them, so a
typo in ``search.yao`` is a :class:`~agent_search.errors.ConfigError` naming the key
rather than a silently ignored option.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from agent_search.config import WebConfig, config_error
from agent_search.errors import validation_summary
from agent_search.types import Count, Number
from agent_search.web._limits import (
    BreakerSettings,
    CallBudget,
    FetchSettings,
    MCPSearchServerSettings,
    RetrySettings,
)

__all__ = ["BreakerSettings", "CallBudget", "FetchSettings", "MCPSearchServerSettings",
           "RetrySettings", "WebSettings"]


class WebSettings(WebConfig):
    """Everything the web handler reads from the ``web`` section (the core's part,
    ``enabled`` / ``min_score`` / ``max_results``, is inherited from :class:`WebConfig`)."""

    model_config = ConfigDict(extra="forbid")
    section = "web"

    max_results: Count = Field(default=10, ge=1, le=100)
    provider: str = "tavily"
    api_key_env: str | None = None
    base_url: str | None = None
    timeout: Number = Field(default=10.0, gt=0, description="Seconds per provider attempt")

    # provider extras
    cx: str | None = Field(default=None, description="Google Programmable Search engine id")
    cx_env: str = "GOOGLE_CSE_ID"
    engine: str = Field(default="google", description="SerpAPI engine")
    country: str | None = None
    language: str | None = None
    search_depth: Literal["basic", "advanced", "fast", "ultra-fast"] = "basic"
    include_answer: bool = Field(default=True, description="Tavily/Serper answer as first item")
    mcp_servers: dict[str, MCPSearchServerSettings] = Field(default_factory=dict)

    providers: list[str | dict[str, Any]] = Field(default_factory=list, description=(
        "Providers in order of preference: a name, or a mapping of web keys for that "
        "provider (provider, base_url, api_key_env, timeout, budget, ...) over this "
        "section's; on 429, 402, 401/403, 5xx, a timeout, an open circuit, a missing key "
        "or a spent budget the next one answers. Replaces `provider` when given."))
    budget: CallBudget | None = Field(default=None, description=(
        "Calls allowed per window; none: unlimited"))

    # behaviour
    keywords: bool = Field(default=False,
                           description="Run builtin keyword extraction on every query")
    fetch_pages: bool = Field(default=False, description="Fetch full pages by default")
    allow_private_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts or CIDRs the SSRF guard lets page fetches reach (e.g. 127.0.0.1)")
    retry: RetrySettings = Field(default_factory=RetrySettings)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, v: str) -> str:
        from agent_search.web.providers import provider_class  # the classes import this module

        v = v.strip().lower()
        provider_class(v)
        return v

    @field_validator("allow_private_hosts", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _provider_settings(self) -> WebSettings:
        """The provider's own checks (e.g. that ``mcp:<server>`` names a known server)."""
        from agent_search.web.providers import provider_class

        provider_class(self.provider).check_settings(self)
        return self

    _chain: list[WebSettings] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _provider_chain(self) -> WebSettings:
        """Each ``providers`` entry as settings of its own (checked now, so a bad entry
        is a configuration error at load, naming its place in the list). A provider
        with a next one is tried once: falling back beats waiting to retry."""
        if not self.providers:
            self._chain = [self]
            return self
        base = self.model_dump(exclude={"providers"})
        last = len(self.providers) - 1
        chain: list[WebSettings] = []
        for i, entry in enumerate(self.providers):
            data = {"provider": entry} if isinstance(entry, str) else dict(entry)
            if "providers" in data:
                raise ValueError(f"providers[{i}]: an entry cannot list providers itself")
            merged = {**base, **data}
            if i < last and "retry" not in data:
                merged["retry"] = {**base["retry"], "attempts": 1}
            try:
                chain.append(WebSettings.model_validate(merged))
            except ValidationError as exc:
                raise ValueError(f"providers[{i}]: {validation_summary(exc, '')}") from None
        self._chain = chain
        return self

    def chain(self) -> list[WebSettings]:
        """The providers to try, in order: ``providers``' entries, else this section."""
        return self._chain or [self]

    @classmethod
    def from_section(cls, section: Any) -> WebSettings:
        """Validate the ``web`` config section (a model or mapping); errors name the key."""
        data = section.model_dump() if isinstance(section, BaseModel) else dict(section or {})
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise config_error(exc, section="web", model=cls) from exc
