"""Loading an assistant's optional ``hooks.py``: ``async def create(ctx, messages, options)``
and ``async def next(ctx, payload)``.

The file is compiled from source (not imported by package name), so two assistants can
each have their own ``hooks.py``. A syntax error or an error raised while the module runs
becomes a :class:`~agent_search.errors.ConfigError` naming the file and the line.
"""

from __future__ import annotations

import inspect
import traceback
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_search.agent._conversation import Message, validate_messages
from agent_search.errors import ConfigError

HOOKS_FILE = "hooks.py"

CreateHook = Callable[[Any, list[dict[str, Any]], Any], Awaitable[Any]]
NextHook = Callable[[Any, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Hooks:
    create: CreateHook | None = None
    next: NextHook | None = None
    file: str | None = None


def load_hooks(assistant_dir: Path, assistant_id: str) -> Hooks:
    """The hooks of the assistant in ``assistant_dir``; empty when there is no hooks.py."""
    path = assistant_dir / HOOKS_FILE
    if not path.is_file():
        return Hooks()
    file = str(path)
    try:
        source = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=file) from exc
    try:
        code = compile(source, file, "exec")
    except SyntaxError as exc:
        raise ConfigError(f"syntax error at line {exc.lineno}: {exc.msg}", file=file) from exc
    module = types.ModuleType(f"agent_search_hooks_{assistant_id.replace('-', '_')}")
    module.__file__ = file
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        line = _line_in(exc, file)
        where = f" at line {line}" if line else ""
        raise ConfigError(f"error while loading{where}: {type(exc).__name__}: {exc}",
                          file=file) from exc
    create = _hook(module, "create", 3, file)
    next_ = _hook(module, "next", 2, file)
    return Hooks(create=create, next=next_, file=file)


def _hook(module: types.ModuleType, name: str, arity: int, file: str) -> Any:
    fn = getattr(module, name, None)
    if fn is None:
        return None
    line = getattr(getattr(fn, "__code__", None), "co_firstlineno", None)
    where = f"line {line}: " if line else ""
    if not inspect.iscoroutinefunction(fn):
        raise ConfigError(f"{where}hook {name!r} must be an 'async def' function", file=file)
    takes = _positional_count(fn)
    if takes is not None and takes != arity:
        raise ConfigError(f"{where}hook {name!r} must take {arity} arguments, "
                          f"it takes {takes}", file=file)
    return fn


def _positional_count(fn: Any) -> int | None:
    """How many positional parameters ``fn`` takes; None when it takes any number."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _line_in(exc: BaseException, file: str) -> int | None:
    """The last line of ``file`` in the exception's traceback."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == file:
            line = frame.lineno
    return line


def hook_error(exc: BaseException, hooks: Hooks, name: str) -> str:
    """One line describing a hook failure, with the line in hooks.py when known."""
    line = _line_in(exc, hooks.file) if hooks.file else None
    where = f" (hooks.py line {line})" if line else ""
    return f"{name} hook failed{where}: {type(exc).__name__}: {exc}"


@dataclass(slots=True)
class HookResponse:
    """What a ``create`` hook returned: ``{messages?, search?, citation?, uses?}``."""

    messages: list[Message] = field(default_factory=list)
    search: bool | None = None
    citation: dict[str, Any] = field(default_factory=dict)
    uses: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: Any) -> HookResponse:
        if raw is None:
            return cls()
        _check_response(raw)
        return cls(validate_messages(raw.get("messages") or []), raw.get("search"),
                   _snake_keys(raw.get("citation") or {}), dict(raw.get("uses") or {}))


def _check_response(raw: Any) -> None:
    """Raise :class:`ValueError` naming what a create hook's reply gets wrong."""
    if not isinstance(raw, dict):
        raise ValueError(f"create hook must return a dict or None, not {type(raw).__name__}")
    unknown = set(raw) - {"messages", "search", "citation", "uses"}
    if unknown:
        raise ValueError(f"create hook returned unknown keys: {', '.join(sorted(unknown))}")
    search = raw.get("search")
    if search is not None and not isinstance(search, bool):
        raise ValueError("create hook 'search' must be true, false or None")
    if not all(isinstance(raw.get(key) or {}, dict) for key in ("citation", "uses")):
        raise ValueError("create hook 'citation' and 'uses' must be objects")


def _snake_keys(d: dict[str, Any]) -> dict[str, Any]:
    """``autoInjectPrompt`` → ``auto_inject_prompt`` (hooks ported from JS use camelCase)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        out["".join("_" + c.lower() if c.isupper() else c for c in k)] = v
    return out
