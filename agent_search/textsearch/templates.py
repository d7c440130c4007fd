"""Prompt templates that call search plugins while rendering (the ADR's RAG samples).

The ADR's Handlebars ``{{#with (SearchPlugin-GetTextSearchResults query)}}`` becomes
jinja2::

    template = PromptTemplate(
        "{% for r in SearchPlugin.GetTextSearchResults(query) %}"
        "Name: {{ r.name }}\\nValue: {{ r.value }}\\nLink: {{ r.link }}\\n-----\\n"
        "{% endfor %}\\n{{ query }}\\n\\nInclude citations to the relevant information.")
    prompt = await template.render(plugins=[plugin], ctx=ctx, query="What is ...?")

A plugin is a template variable named after it; calling one of its functions runs the
search (arguments validated like a tool call: ``SearchPlugin.Search(query, count=3)``) and
gives the JSON-ready results. Rendering is async (searches are awaited in place) and
sandboxed (jinja2's ``SandboxedEnvironment``: templates cannot reach Python internals);
an undefined variable is an error, not an empty string. Results are inserted as text,
never rendered again as template code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from agent_search.context import Context
from agent_search.textsearch.base import TextSearchError
from agent_search.textsearch.plugin import SearchPlugin

_ENV = SandboxedEnvironment(enable_async=True, undefined=StrictUndefined, autoescape=False,
                            keep_trailing_newline=True)


class TemplateRenderError(TextSearchError):
    """A prompt template is invalid or failed while rendering."""


class _PluginView:
    """What a template sees of a plugin: its functions as async callables."""

    __slots__ = ("_ctx", "_plugin")

    def __init__(self, plugin: SearchPlugin, ctx: Context | None) -> None:
        self._plugin = plugin
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        fn = self._plugin.get(name)
        if fn is None:
            raise AttributeError(f"plugin {self._plugin.name} has no function {name!r}")
        ctx = self._ctx

        async def call(query: str, **arguments: Any) -> list[Any]:
            return await fn.invoke({"query": query, **arguments}, ctx)

        return call


class PromptTemplate:
    """A jinja2 prompt template; compiled once, rendered per request."""

    def __init__(self, source: str) -> None:
        try:
            self._template = _ENV.from_string(source)
        except TemplateError as exc:
            raise TemplateRenderError(f"invalid prompt template: {exc}") from exc

    async def render(self, *, plugins: Sequence[SearchPlugin] = (), ctx: Context | None = None,
                     **variables: Any) -> str:
        names = {p.name for p in plugins}
        clash = names & set(variables)
        if clash:
            raise TemplateRenderError(f"variable(s) {', '.join(sorted(clash))} shadow a plugin")
        scope: dict[str, Any] = {p.name: _PluginView(p, ctx) for p in plugins}
        scope.update(variables)
        try:
            return await self._template.render_async(scope)
        except TextSearchError:
            raise
        except TemplateError as exc:
            raise TemplateRenderError(f"prompt template failed: {exc}") from exc


async def render_prompt(source: str, *, plugins: Sequence[SearchPlugin] = (),
                        ctx: Context | None = None, **variables: Any) -> str:
    """Compile and render ``source`` once (see :class:`PromptTemplate`)."""
    return await PromptTemplate(source).render(plugins=plugins, ctx=ctx, **variables)


DEFAULT_RAG_TEMPLATE = (
    "{% for r in results %}"
    "Name: {{ r.name }}\n"
    "Value: {{ r.value }}\n"
    "Link: {{ r.link }}\n"
    "-----------------\n"
    "{% endfor %}\n"
    "{{ query }}\n\n"
    "Include citations to the relevant information where it is referenced in the response.\n"
)
"""The ADR's name/value/link RAG prompt, over a ``results`` variable."""
