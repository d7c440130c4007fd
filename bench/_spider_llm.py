"""The LLM column of ``bench/bench_spider.py``: the same questions through an
OpenAI-compatible chat endpoint configured as the ``uses.query`` DSL generator.

Nothing here is a bench-only path: the endpoint is a connector of a temporary
``config/agent.yml``, the generator an assistant (``assistants/spider-dsl/package.yao``,
its system prompt below) run by :class:`agent_search.agent.delegation.Delegates`
exactly as ``uses.query: spider-dsl`` runs it for a user: the db handler sends it the
question and the schemas, validates its DSL against them and asks again with the error.
``query.strict`` is on, so a failed generation is the question's error instead of a
silent fallback to the builtin parser (the column measures the LLM alone).

An endpoint that fails every question of the first few (down, refusing, wrong model) is
not asked the rest: those are counted as failed with its error (a host that drops
packets would otherwise cost a connect timeout per question).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "spider-dsl"
"""The generator's assistant id (the ``uses.query`` value of the LLM column)."""
TRIP_AFTER = 3
"""Failures in a row, with no success yet, after which the endpoint is not asked again."""

PROMPT = """You turn a question about a database into one QueryDSL JSON object.
The user message is a JSON task: {"task": "query", "text": QUESTION, "schemas": [...],
"feedback"?: the error of your previous answer}. Each schema is a table: "id" (the
model name to use), "fields" (name, kind, known "values" of categorical text fields),
"relations" (name, hasOne/hasMany, the related model). Answer with JSON only:
{"model": ID,
 "wheres": [{"field": F, "op": OP, "value": V}, {"or": [...]}],
 "orders": [{"field": F, "order": "asc"|"desc"}], "limit": N,
 "group_by": [F], "aggregates": ["count", "count(distinct F)", "avg(F)", "min(F)",
 "max(F)", "sum(F)"], "having": [{"aggregate": "count", "op": ">", "value": 1}]}
OP is one of =, !=, <, <=, >, >=, like, in, not in, is null, is not null.
F is a field of the model, "relation.field" through its relations (up to two hops), or
"count(relation)" for the number of related rows of a hasMany relation.
Records: wheres / orders / limit. Numbers (how many, average, per group): aggregates,
with group_by for "per" / "each", orders naming an aggregate or a group field.
Use only models, fields and values of the schemas. Omit keys you do not need."""


@dataclass(frozen=True)
class LLMSpec:
    """Where the LLM column's generator runs."""

    url: str
    model: str
    key_env: str | None = None
    timeout: float = 60.0

    def problem(self) -> str | None:
        """Why this spec cannot work (one line), checked before any question is asked."""
        import httpx

        try:
            url = httpx.URL(self.url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            return f"--llm-url {self.url!r} is not a URL: {exc}"
        if url.scheme not in ("http", "https") or not url.host:
            return (f"--llm-url {self.url!r}: give the http(s) base URL of an "
                    "OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
        if not self.model.strip():
            return "--llm-model: name the model the endpoint serves"
        if self.key_env and not os.environ.get(self.key_env):
            return f"--llm-key-env {self.key_env}: that environment variable is not set"
        if not self.timeout > 0:
            return f"--llm-timeout {self.timeout}: give seconds > 0"
        return None


def _write_config(root: Path, spec: LLMSpec) -> Path:
    """``config/agent.yml`` (the connector), ``config/search.yao`` (a home in ``root``,
    nothing searched by the generator itself) and the generator's ``package.yao``."""
    config = root / "config"
    config.mkdir(parents=True)
    connector: dict[str, Any] = {"base_url": spec.url, "model": spec.model,
                                 "timeout": spec.timeout, "temperature": 0}
    if spec.key_env:
        connector["api_key_env"] = spec.key_env
    agent = {"connectors": {"bench": connector},
             "delegation": {"timeout": spec.timeout}, "records": False}
    # agent.yml is YAML; JSON is YAML
    (config / "agent.yml").write_text(json.dumps(agent))
    (config / "search.yao").write_text(json.dumps({
        "home": str(root / "home"), "web": {"enabled": False}, "kb": {"enabled": False},
        "db": {"enabled": False}}))
    package = root / "assistants" / NAME
    package.mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({
        "name": "Spider DSL writer", "connector": "bench", "search": False,
        "prompts": [{"role": "system", "content": PROMPT}]}))
    return config


@contextlib.asynccontextmanager
async def generator(spec: LLMSpec) -> AsyncIterator[Any]:
    """The ``uses.query`` generator of ``spec`` (a ``DSLGenerator``), closed on exit."""
    import shutil

    from agent_search.agent.assistant import Assistant
    from agent_search.agent.delegation import Delegates
    from agent_search.agent.settings import AgentSettings

    root = Path(tempfile.mkdtemp(prefix="bench-spider-llm-"))
    delegates: Delegates | None = None
    try:
        config = _write_config(root, spec)
        delegates = Delegates(
            AgentSettings.load(config), assistants_root=root / "assistants",
            config_dir=config,
            load_assistant=lambda path, cdir: Assistant.load(path, config_dir=cdir))
        made = delegates.dsl_generator(NAME)
        assert made is not None
        yield made
    finally:
        if delegates is not None:
            await delegates.aclose()
        shutil.rmtree(root, ignore_errors=True)


async def probe(spec: LLMSpec) -> str | None:
    """Why the endpoint cannot answer one chat request (one line), or None. Asked once
    before the column runs, so a down or refusing endpoint is said plainly instead of
    through each question's generation error."""
    from agent_search.agent.llm.base import LLMError
    from agent_search.agent.llm.openai import OpenAIChatClient
    from agent_search.agent.settings import ConnectorSettings

    settings = ConnectorSettings(base_url=spec.url, model=spec.model,
                                 api_key_env=spec.key_env, timeout=spec.timeout)
    client = OpenAIChatClient("LLM endpoint", settings)
    try:
        async for _event in client.stream_chat([{"role": "user", "content": "Say OK."}]):
            pass
    except LLMError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    finally:
        await client.aclose()
    return None


class Breaker:
    """Stops asking an endpoint that failed the probe, or the first :data:`TRIP_AFTER`
    questions in a row without ever answering."""

    def __init__(self, probe_error: str | None = None) -> None:
        self.answered = False
        self.failures = TRIP_AFTER if probe_error else 0
        self.reason = probe_error and f"not asked: {probe_error}"

    @property
    def open(self) -> bool:
        return not self.answered and self.failures >= TRIP_AFTER

    def record(self, error: str | None) -> None:
        if error is None:
            self.answered = True
            return
        self.failures += 1
        if self.reason is None and self.open:
            self.reason = (f"not asked: the endpoint failed the first {TRIP_AFTER} "
                           f"questions: {error}")

    def skipped(self) -> str:
        return self.reason or "not asked"


def error_lines(scored: list[dict[str, Any]]) -> list[str]:
    """One line per question kind with failed generations: how many, and the first
    error (its first line)."""
    out = []
    for kind in ("record", "count", "aggregate", "other"):
        failed = [s for s in scored if s["kind"] == kind and s.get("error")]
        if failed:
            n = sum(1 for s in scored if s["kind"] == kind)
            first = str(failed[0]["error"]).splitlines()[0][:300]
            out.append(f"LLM {kind}: {len(failed)} of {n} questions failed: {first}")
    return out
