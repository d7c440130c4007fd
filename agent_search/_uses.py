"""The ``uses`` switches checked when the configuration is loaded.

``uses.keyword`` / ``uses.query`` / ``uses.rerank`` name who does that work:
``builtin``, an assistant id (a folder of the assistants folder), ``mcp:<server>.<tool>``
(a server of ``mcp.servers`` in agent.yml) or, for rerank, ``model:<name>`` (an endpoint
of ``rerankers``). A value naming nothing that exists — ``bultin``, an assistant that is
not there, an undeclared server — is a :class:`~agent_search.errors.ConfigError` with
the file, the key, the line and the closest valid value, at load time, instead of a
fallback to builtin on every run. (A delegate that exists but fails at run time still
falls back, with a warning: see :mod:`agent_search.agent.delegation`.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_search._config_keys import did_you_mean
from agent_search.errors import ConfigError

if TYPE_CHECKING:
    from agent_search.config import SearchConfig

_BUILTIN = ("builtin", "score")  # "score": the score sort, builtin's other name for rerank


@dataclass(frozen=True)
class UsesTargets:
    """What ``uses`` values may name. ``None`` for a kind means it is not known (no
    agent.yml, no assistants folder), and any name of that kind is refused."""

    mcp_servers: tuple[str, ...] = ()
    rerankers: tuple[str, ...] = ()
    assistants_root: Path | None = None

    def with_assistants(self, root: Path | None) -> UsesTargets:
        return replace(self, assistants_root=root)

    def assistants(self) -> list[str]:
        root = self.assistants_root
        if root is None or not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if (p / "package.yao").is_file())


def check_uses(config: SearchConfig, targets: UsesTargets) -> None:
    """Refuse a ``uses`` value that names nothing that exists (see the module doc)."""
    for name in ("keyword", "query", "rerank"):
        value = str(getattr(config.uses, name) or "builtin").strip()
        problem = _problem(name, value, targets)
        if problem is None:
            continue
        message, choices = problem
        key = f"uses.{name}"
        raise config.locate(ConfigError(message, key=key, hint=did_you_mean(value, choices)))


def _problem(name: str, value: str, targets: UsesTargets
             ) -> tuple[str, list[str]] | None:
    """Why ``value`` names nothing (and the values that would), or None when it is fine."""
    if value in _BUILTIN:
        return None
    for prefix, check in _BY_PREFIX.items():
        if value.startswith(prefix):
            return check(name, value, targets)
    return _assistant_problem(name, value, targets)


def _mcp_problem(name: str, value: str, targets: UsesTargets
                 ) -> tuple[str, list[str]] | None:
    """``mcp:<server>.<tool>``: a declared server, and a tool named."""
    servers = list(targets.mcp_servers)
    server, dot, tool = value[4:].partition(".")
    if server not in servers:
        declared = ", ".join(servers) or "none"
        return (f"{value!r}: no MCP server {server!r} in agent.yml mcp.servers "
                f"(declared: {declared})", [f"mcp:{s}.{tool}" for s in servers])
    if not dot or not tool:
        return f"{value!r}: name the tool, mcp:<server>.<tool>", []
    return None


def _model_problem(name: str, value: str, targets: UsesTargets
                   ) -> tuple[str, list[str]] | None:
    """``model:<name>``: for rerank only, a declared reranker."""
    if name != "rerank":
        return f"{value!r}: model:<name> is for uses.rerank only", ["builtin"]
    rerankers = list(targets.rerankers)
    if value[6:] not in rerankers:
        declared = ", ".join(rerankers) or "none"
        return (f"{value!r}: no reranker {value[6:]!r} in agent.yml rerankers "
                f"(declared: {declared})", [f"model:{r}" for r in rerankers])
    return None


def _assistant_problem(name: str, value: str, targets: UsesTargets
                       ) -> tuple[str, list[str]] | None:
    """Any other value: an assistant of the assistants folder; else every valid value is
    offered."""
    assistants = targets.assistants()
    if value in assistants:
        return None
    rerankers = list(targets.rerankers) if name == "rerank" else []
    valid = ["builtin", *assistants, *(f"mcp:{s}" for s in targets.mcp_servers),
             *(f"model:{r}" for r in rerankers)]
    where = (f"an assistant in {targets.assistants_root}"
             if targets.assistants_root is not None else
             "an assistant (no assistants folder was found)")
    return f"{value!r} is neither builtin nor {where}", valid


_BY_PREFIX = {"mcp:": _mcp_problem, "model:": _model_problem}
"""The checks of the values that name a kind of target by a prefix."""
