"""The typed settings of the ``web`` configuration section.

``SearchConfig.web`` keeps unknown keys; :class:`WebSettings` validates all of them, so a
typo in ``search.yao`` is a :class:`~agent_search.errors.ConfigError` naming the key
rather than a silently ignored option.

The section holds what every provider shares (which provider, its endpoint, key
variable, timeouts, retries, budget, page fetching); a provider's own keys sit in its
own section ``web.<provider>``, checked by the provider's settings model::

    web:
      provider: google
      google: {cx: 0123456789abcdef, language: de}

The flat spellings of earlier releases (``web.cx``, ``web.engine``, ``web.country``,
``web.language``, ``web.search_depth``, ``web.include_answer``, ``web.cx_env``) still
work, with a DeprecationWarning: each applies to every provider whose settings have
that key, as before, and a provider's own section wins over it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from agent_search._config_keys import known_keys
from agent_search.config import WebConfig, config_error
from agent_search.errors import ConfigError, closest, did_you_mean, validation_summary
from agent_search.types import Count, Number
from agent_search.web._limits import (
    BreakerSettings,
    CallBudget,
    FetchSettings,
    MCPSearchServerSettings,
    RetrySettings,
)

if TYPE_CHECKING:
    from agent_search.web.providers import ProviderSettings, WebProvider

LEGACY_KEYS: tuple[str, ...] = ("cx", "cx_env", "engine", "country", "language",
                                "search_depth", "include_answer")
"""Provider keys the shared section took before each provider had its own section;
read for a release, with a DeprecationWarning."""

__all__ = ["LEGACY_KEYS", "BreakerSettings", "CallBudget", "FetchSettings",
           "MCPSearchServerSettings", "RetrySettings", "WebSettings"]


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

    # each provider's own keys: written ``web.<provider>: {...}``, kept here by name
    provider_options: dict[str, dict[str, Any]] = Field(default_factory=dict, description=(
        "each provider's own section by provider name; write it as web.<provider>"))
    mcp_servers: dict[str, MCPSearchServerSettings] = Field(default_factory=dict)

    # deprecated flat spellings of provider keys (see LEGACY_KEYS); None: not set
    cx: str | None = Field(default=None, description="deprecated: web.google.cx")
    cx_env: str | None = Field(default=None, description="deprecated: web.google.cx_env")
    engine: str | None = Field(default=None, description="deprecated: web.serpapi.engine")
    country: str | None = Field(default=None, description="deprecated: web.<provider>.country")
    language: str | None = Field(default=None,
                                 description="deprecated: web.<provider>.language")
    search_depth: str | None = Field(default=None,
                                     description="deprecated: web.tavily.search_depth")
    include_answer: bool | None = Field(
        default=None, description="deprecated: web.<provider>.include_answer")

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

    _sections: dict[str, ProviderSettings] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _gather_sections(cls, data: Any) -> Any:
        """Move each ``web.<provider>`` section into ``provider_options`` (the provider
        names come from the registry, plug-ins included); warn once for each deprecated
        flat provider key that is set."""
        if not isinstance(data, dict):
            return data
        from agent_search.web.providers import provider_names

        data = dict(data)
        names = provider_names()
        _check_section_names(data, names, set(cls.model_fields))
        options = dict(data.get("provider_options") or {})
        for name in names:
            if name in data:
                section = data.pop(name)
                options[name] = {**options.get(name, {}), **section} \
                    if isinstance(section, dict) else section
        data["provider_options"] = options
        for key in LEGACY_KEYS:
            if data.get(key) is not None:
                warnings.warn(f"web.{key} is deprecated: write it in the provider's own "
                              f"section, web.<provider>.{key} (e.g. web.{_example(key)}.{key})",
                              DeprecationWarning, stacklevel=2)
        return data

    @model_validator(mode="after")
    def _check_sections(self) -> WebSettings:
        """Each named section and the chosen provider's, checked by the provider's own
        settings model now, so a bad key is an error at load naming it."""
        from agent_search.web.providers import PROVIDER_CLASSES

        for name in sorted({*self.provider_options, self.provider.partition(":")[0]}):
            cls = PROVIDER_CLASSES.get(name)
            if cls is None:
                raise ValueError(f"provider_options: no provider is named {name!r}")
            self.options_for(cls)
        return self

    def options_for(self, provider: type[WebProvider]) -> ProviderSettings:
        """The settings of ``provider``'s own section, ``web.<name>`` (deprecated flat
        keys fill what the section leaves unset)."""
        known = self._sections.get(provider.name)
        if known is not None:
            return known
        model = provider.settings_model
        legacy = {key: getattr(self, key) for key in LEGACY_KEYS
                  if key in model.model_fields and getattr(self, key) is not None}
        try:
            settings = model.model_validate(
                {**legacy, **self.provider_options.get(provider.name, {})})
        except ValidationError as exc:
            # a ConfigError keyed in the section: the section's error names web.google.cxx
            errors = exc.errors()  # an unknown key first: often why another seems wrong
            err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
            key = ".".join([provider.name, *(str(p) for p in err["loc"])])
            if err["type"] == "extra_forbidden":  # worded as the config's own unknown keys
                hint = closest(str(err["loc"][-1]), known_keys(model, err["loc"][:-1]))
                raise ConfigError("unknown key", key=key, hint=hint) from None
            raise ConfigError(str(err["msg"]).removeprefix("Value error, "), key=key) from None
        self._sections[provider.name] = settings
        return settings

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, v: str) -> str:
        from agent_search.web.providers import (
            provider_class,  # the classes import this module
            provider_names,
        )

        v = v.strip().lower()
        try:
            provider_class(v)
        except ValueError as exc:
            base = v.partition(":")[0]
            names = provider_names()
            hint = did_you_mean(base, names) if base not in names else ""
            raise ValueError(f"{exc}{hint}") from None
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


_EXAMPLES = {"cx": "google", "cx_env": "google", "engine": "serpapi", "search_depth": "tavily",
             "include_answer": "tavily", "country": "tavily", "language": "google"}


def _check_section_names(data: dict[str, Any], names: Sequence[str], fields: set[str]) -> None:
    """A misspelt provider section is an error naming the provider it is a typo of; a
    provider named like a web key is refused (a provider's name is its section's key)."""
    for key in data:
        hint = closest(str(key), [*fields, *names])
        if key not in fields and key not in names and hint in names:
            raise ConfigError("unknown key", key=str(key), hint=hint)
    clash = next((name for name in names if name in fields), None)
    if clash is not None:
        raise ValueError(f"the web provider {clash!r} takes the name of a web key; "
                         "a provider's name is its section's key")


def _example(key: str) -> str:
    return _EXAMPLES.get(key, "tavily")
