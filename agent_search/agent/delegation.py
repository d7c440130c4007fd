"""``uses.keyword`` / ``uses.query`` / ``uses.rerank``: who does that piece of work.

Each value is one of:

* ``builtin`` — rule based, no LLM (keyword extractor, the db handler's own NL→DSL,
  score sort);
* ``<assistant-id>`` — run that assistant (``assistants/<id>``) with a JSON task as the
  user message and parse the JSON in its answer;
* ``mcp:<server>.<tool>`` — call that tool of an MCP server from config/agent.yml;
* ``model:<name>`` (rerank only) — an HTTP rerank endpoint from ``rerankers:``.

Anything that fails, times out or answers garbage falls back to builtin, with a warning
recorded in the stream's search record.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from agent_search._json_answer import NoJSONAnswer
from agent_search._json_answer import parse_json_answer as _parse_json
from agent_search.agent.options import Options
from agent_search.agent.settings import AgentSettings
from agent_search.deps import Deps, builtin_keywords
from agent_search.errors import RunError
from agent_search.mcp.client import MCPServers
from agent_search.rerank import Reranker
from agent_search.trace import first_line

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.types import ResultItem


class TaskAssistant(Protocol):
    """What a delegate assistant must do: answer a conversation, and close."""

    async def answer(self, messages: Sequence[Any], options: Options | None = None) -> str: ...

    async def aclose(self) -> None: ...


AssistantLoader = Callable[[Path, "Path | None"], TaskAssistant]
"""``(assistant folder, config folder) -> assistant``: how delegates load an assistant
(:meth:`Assistant.load <agent_search.agent.assistant.Assistant.load>`, handed in by the
assistant, so this module does not import it)."""

MAX_DEPTH = 3
_depth: contextvars.ContextVar[int] = contextvars.ContextVar("agent_search_delegation", default=0)


class DelegationError(RunError):
    """A delegate (assistant, MCP tool, model endpoint) could not do its task."""


@dataclass(frozen=True, slots=True)
class Use:
    kind: str  # "builtin" | "agent" | "mcp" | "model"
    target: str = ""
    tool: str = ""

    @classmethod
    def parse(cls, value: str | None) -> Use:
        v = (value or "builtin").strip()
        if v in ("", "builtin", "score"):
            return cls("builtin")
        if v.startswith("mcp:"):
            server, _, tool = v[4:].partition(".")
            return cls("mcp", server, tool)
        if v.startswith("model:"):
            return cls("model", v[6:])
        return cls("agent", v)

    def __str__(self) -> str:
        if self.kind == "builtin":
            return "builtin"
        if self.kind == "mcp":
            return f"mcp:{self.target}.{self.tool}"
        return f"{self.kind}:{self.target}"


def parse_json_answer(text: str) -> Any:
    """The first JSON object or array in ``text`` (models wrap JSON in prose or fences):
    the core's parser (:func:`agent_search._json_answer.parse_json_answer`, which the
    research planner uses too), its failure as a :class:`DelegationError`."""
    try:
        return _parse_json(text)
    except NoJSONAnswer as exc:
        # the answer is often the delegate's own failure (an LLM error, a refusal): the
        # message shows enough of it to tell which
        raise DelegationError(str(exc)) from None


class _DelegateReranker:
    """A delegate reranker with its label and the delegation timeout; what happens when
    it fails is the one policy of :func:`agent_search.rerank.apply_rerank`, which the
    searcher's merge applies."""

    def __init__(self, primary: Reranker, label: str, timeout: float) -> None:
        self.primary = primary
        self.label = label
        self.timeout = timeout

    async def rerank(self, ctx: Context, query: str, items: list[ResultItem],
                     top_n: int = 0) -> list[ResultItem]:
        return await self.primary.rerank(ctx, query, items, top_n)


class DelegatedDSLGenerator:
    """NL → QueryDSL by an assistant or an MCP tool (the ``DSLGenerator`` protocol of
    :mod:`agent_search.query.dsl`).

    Task sent: ``{"task": "query", "text", "schemas": [model schemas], "feedback"?}``;
    expected answer: a DSL object (``{"model", "wheres", "orders", "select", "limit"}``)
    or ``{"dsl": {...}}``."""

    def __init__(self, name: str, use: Use, delegates: Delegates) -> None:
        self.name = name
        self.use = use
        self._delegates = delegates

    async def generate(self, query: str, schemas: Sequence[Any], *,
                       feedback: str | None = None) -> dict[str, Any]:
        task: dict[str, Any] = {
            "task": "query", "text": query,
            "schemas": [s.model_dump(mode="json") if hasattr(s, "model_dump") else s
                        for s in schemas],
        }
        if feedback:
            task["feedback"] = feedback
        answer = await self._delegates.delegate(self.use, task)
        if isinstance(answer, dict) and isinstance(answer.get("dsl"), dict):
            answer = answer["dsl"]
        if not isinstance(answer, dict):
            raise DelegationError(f"{self.use} answered {type(answer).__name__}, "
                                  "not a DSL object")
        return answer


class DelegatedGenerators(Mapping[str, DelegatedDSLGenerator]):
    """A stream's NL → DSL generators by ``uses.query`` name (its ``ctx.deps.generators``):
    the one a name stands for is built on its first lookup, so a create hook that names
    another ``uses.query`` finds it the same way, and the stream's deps are filled once.
    Builtin names are not here (the db handler has its own generator); the names looked
    up so far (and the one given first) are the mapping's keys."""

    def __init__(self, delegates: Delegates, first: str | None) -> None:
        self._delegates = delegates
        self._built: dict[str, DelegatedDSLGenerator] = {}
        if first:
            self.get(first)

    def __getitem__(self, name: str) -> DelegatedDSLGenerator:
        generator = self._built.get(name)
        if generator is None:
            generator = self._delegates.dsl_generator(name)
            if generator is None:
                raise KeyError(name)
            self._built[name] = generator
        return generator

    def __iter__(self) -> Iterator[str]:
        return iter(self._built)

    def __len__(self) -> int:
        return len(self._built)


class Delegates:
    """Runs the ``uses`` delegates of one assistant."""

    def __init__(self, settings: AgentSettings, *, assistants_root: Path,
                 config_dir: Path | None, log_dir: Path | None = None,
                 load_assistant: AssistantLoader | None = None) -> None:
        self.settings = settings
        self._load_assistant = load_assistant
        self.assistants_root = assistants_root
        self.config_dir = config_dir
        base = Path(settings.file).parent.parent if settings.file else None
        self.mcp = MCPServers(settings.mcp.servers, base_dir=base, log_dir=log_dir)
        self._agents: dict[str, TaskAssistant] = {}

    @property
    def timeout(self) -> float:
        return self.settings.delegation.timeout

    async def aclose(self) -> None:
        """Close the assistants loaded to run delegate tasks (their LLM clients and
        searchers). Best effort: one that fails to close does not keep the others open."""
        agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            with contextlib.suppress(Exception):
                await agent.aclose()

    # -- the generic delegate calls ---------------------------------------------------

    async def run_agent_task(self, agent_id: str, task: dict[str, Any]) -> Any:
        """Run assistant ``agent_id`` on a JSON task; its parsed JSON answer."""
        depth = _depth.get()
        if depth >= MAX_DEPTH:
            raise DelegationError(f"delegation deeper than {MAX_DEPTH} levels "
                                  f"(assistant {agent_id!r} calls itself?)")
        assistant = self._agents.get(agent_id)
        if assistant is None:
            path = self.assistants_root / agent_id
            if not (path / "package.yao").is_file():
                raise DelegationError(f"assistant {agent_id!r} not found at {path}")
            load = self._load_assistant
            if load is None:
                raise DelegationError(f"assistant {agent_id!r}: no assistant loader given "
                                      "to run delegate assistants")
            config_dir = self.config_dir
            # loading reads and compiles files: keep it off the event loop
            assistant = await anyio.to_thread.run_sync(lambda: load(path, config_dir))
            self._agents[agent_id] = assistant
        token = _depth.set(depth + 1)
        try:
            text = await assistant.answer(
                [{"role": "user", "content": json.dumps(task, ensure_ascii=False)}],
                Options(search=False))
        finally:
            _depth.reset(token)
        return parse_json_answer(text)

    async def call_mcp_tool(self, use: Use, arguments: dict[str, Any]) -> Any:
        if not use.tool:
            raise DelegationError(f"'mcp:{use.target}' needs a tool: mcp:<server>.<tool>")
        return await self.mcp.call_tool(use.target, use.tool, arguments, timeout=self.timeout)

    async def delegate(self, use: Use, task: dict[str, Any]) -> Any:
        """Run ``task`` on an agent or MCP delegate, within the delegation timeout."""
        with anyio.fail_after(self.timeout):
            if use.kind == "agent":
                return await self.run_agent_task(use.target, task)
            if use.kind == "mcp":
                args = {k: v for k, v in task.items() if k != "task"}
                return await self.call_mcp_tool(use, args)
        raise DelegationError(f"{use} cannot do this task")

    # -- uses.keyword -------------------------------------------------------------------

    async def keywords(self, processor: str | None, text: str, *, max_keywords: int,
                       language: str, warnings: list[str]) -> list[str]:
        """The ``uses.keyword`` extractor of a stream (its ``ctx.deps.keywords``): the
        delegate ``processor`` names, falling back to the builtin one with a warning."""
        use = Use.parse(processor)
        if use.kind != "builtin":
            try:
                answer = await self.delegate(use, {"task": "keywords", "text": text,
                                                    "max_keywords": max_keywords,
                                                    "language": language})
                return _keywords_in(answer, max_keywords)
            except TimeoutError:
                warnings.append(f"keyword {use} timed out after {self.timeout:g}s, "
                                "used builtin")
            except Exception as exc:
                warnings.append(f"keyword {use} failed, used builtin: {first_line(exc)}")
        return await builtin_keywords(None, text, max_keywords=max_keywords,
                                      language=language, warnings=warnings)

    # -- uses.query -------------------------------------------------------------------

    def dsl_generator(self, value: str | None) -> DelegatedDSLGenerator | None:
        """A QueryDSL generator for a non-builtin ``uses.query`` (None for builtin).

        The db handler calls it with the real model schemas, validates each answer
        against them and asks again with the validation error (``feedback``), then falls
        back to its builtin generator with a warning."""
        use = Use.parse(value)
        if use.kind not in ("agent", "mcp"):
            return None
        return DelegatedDSLGenerator(str(value), use, self)

    # -- uses.rerank --------------------------------------------------------------------

    def resolve_reranker(self, ctx: Context, name: str) -> Reranker | None:
        """The delegated reranker ``name`` stands for (the ``ctx.deps.rerankers`` of a
        stream; :func:`agent_search.rerank.resolve_reranker` asks it after the searcher's
        own names). The request-level kinds ``model`` / ``mcp`` / ``agent`` are the one
        ``uses.rerank`` names when it is of that kind (``model`` falls back to the first
        of ``rerankers:``); any other name is a ``uses.rerank`` value (``model:<name>``,
        ``mcp:<server>.<tool>``, an assistant id), bounded by the delegation timeout.
        None when nothing provides it; DelegationError when it cannot be built."""
        if name in ("model", "mcp", "agent"):
            use = Use.parse(ctx.config.uses.rerank)
            if use.kind == name:
                return self.primary_reranker(use)
            if name == "model" and self.settings.rerankers:
                return self.primary_reranker(Use("model", next(iter(self.settings.rerankers))))
            return None
        use = Use.parse(name)
        return _DelegateReranker(self.primary_reranker(use), str(use), self.timeout)

    def primary_reranker(self, use: Use) -> Reranker:
        """The model / MCP / agent reranker of ``use``, without fallback."""
        from agent_search.rerank import AgentReranker, MCPReranker, ModelReranker

        if use.kind == "model":
            cfg = self.settings.rerankers.get(use.target)
            if cfg is None:
                raise DelegationError(f"no reranker {use.target!r} in config/agent.yml "
                                      "rerankers")
            key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
            return ModelReranker(cfg.url, protocol=cfg.protocol, model=cfg.model,
                                 api_key=key, timeout=cfg.timeout)
        if use.kind == "mcp":
            async def call(args: dict[str, Any]) -> Any:
                return await self.call_mcp_tool(use, args)

            return MCPReranker(str(use), call)
        if use.kind == "agent":
            async def run(task: dict[str, Any]) -> Any:
                return await self.run_agent_task(use.target, task)

            return AgentReranker(use.target, run)
        raise DelegationError(f"{use} is not a reranker")

    # -- the run's deps -----------------------------------------------------------------

    def deps(self, uses_query: str | None) -> Deps:
        """What a stream hands to handlers (``ctx.deps``), filled once: the ``uses.query``
        generators (``uses_query``'s, and whichever a create hook names, built when
        looked up), the ``uses.keyword`` extractor and the delegated-reranker resolver."""
        return Deps(generators=DelegatedGenerators(self, uses_query),
                    keywords=self.keywords, rerankers=self.resolve_reranker)


def _keywords_in(answer: Any, max_keywords: int) -> list[str]:
    """The keywords of a delegate's answer (a list of strings, or ``{"keywords": [...]}``),
    at most ``max_keywords``; a DelegationError when it holds none."""
    if isinstance(answer, dict):
        answer = answer.get("keywords")
    if not isinstance(answer, list) or not all(isinstance(k, str) for k in answer):
        raise DelegationError("answer is not a list of keyword strings")
    keywords = [k.strip() for k in answer if k.strip()][:max_keywords]
    if not keywords:
        raise DelegationError("answer has no keywords")
    return keywords
