"""Reading configuration files, and the one-line error of a file that fails its schema:
a leaf module (it imports no settings), so every settings module — the search
configuration, ``agent.yml``'s, the server's, a ``package.yao`` — reads its file the same
way without importing another settings module (:mod:`agent_search.config` validates
whole files by those modules' schemas, so they must not import it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import json5
import yaml
from pydantic import BaseModel, ValidationError

from agent_search._config_keys import did_you_mean, known_keys
from agent_search._text import check_tree
from agent_search.errors import ConfigError
from agent_search.trace import message_line

BUILTIN_TYPES: tuple[str, ...] = ("web", "kb", "db")
"""The search types with a section of their own; custom types live under ``types``."""


def config_error(exc: ValidationError, *, file: str | None = None,
                 section: str | None = None, model: type[BaseModel] | None = None,
                 prefix: str = "") -> ConfigError:
    """The one-line :class:`ConfigError` for settings that failed validation: the first
    error, its dotted key (under ``section``; ``prefix`` is where the settings sit in
    ``file``), "unknown key" for a key the settings do not have — with the closest key
    ``model`` has there, when one is close — without pydantic's "Value error, " prefix.
    The error finds the key's line in ``file`` itself. An unknown key is reported before
    any other error: a misspelt key is often why a required one seems missing. A
    validator that raises a :class:`ConfigError` naming a key inside the settings (a
    provider's section, ``google.cxx``) has it named in full, with its hint."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err["loc"])
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, ConfigError) and cause.key and cause.file is None:
        # a validator's own error naming a key inside the settings (``google.cxx``)
        return ConfigError(cause.message, file=file, hint=cause.hint,
                           key=_dotted(prefix, section, (*loc, cause.key)))
    key = _dotted(prefix, section, loc)
    if err["type"] == "extra_forbidden":
        hint = did_you_mean(str(loc[-1]), known_keys(model, loc[:-1])) if model else None
        return ConfigError("unknown key", file=file, key=key, hint=hint)
    return ConfigError(str(err["msg"]).removeprefix("Value error, "), file=file, key=key)


def _dotted(prefix: str, section: str | None, parts: tuple[Any, ...]) -> str:
    """``prefix`` then the dotted key of ``parts`` under ``section``."""
    return prefix + ".".join([*([section] if section else []), *(str(p) for p in parts)])


MAX_CONFIG_BYTES = 1_000_000
"""A configuration file larger than this is refused before it is parsed."""

MAX_CONFIG_DEPTH = 64
"""Deepest nesting of objects/lists a configuration file may have."""


def read_config_text(path: Path) -> str:
    """The text of a configuration file, size-checked before it is read; errors name it."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"file too large ({size:,} bytes; limit {MAX_CONFIG_BYTES:,})",
                              file=str(path))
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from exc


def check_nesting(text: str, file: str) -> None:
    """Refuse text nested deeper than :data:`MAX_CONFIG_DEPTH` before a recursive parser
    sees it (deep nesting otherwise ends in a RecursionError traceback). Brackets inside
    strings count too, which only errs on the safe side for absurd files."""
    depth = 0
    for bracket in _BRACKETS.findall(text):
        depth = depth + 1 if bracket in "[{" else max(depth - 1, 0)
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(f"nested deeper than {MAX_CONFIG_DEPTH} levels", file=file)


_BRACKETS = re.compile(r"[\[\]{}]")

_JSON5_LOCATION = re.compile(r"^<string>:(?P<line>\d+)\s*(?P<msg>.*)$")


def parse_jsonc(text: str, file: str) -> dict[str, Any]:
    """A JSONC object from ``text`` (JSON with comments and trailing commas); errors name
    ``file`` and, for a syntax error, the line."""
    check_nesting(text, file)
    try:
        data = json5.loads(text)
    except (ValueError, RecursionError) as exc:
        message = message_line(exc) or type(exc).__name__
        located = _JSON5_LOCATION.match(message)
        if located:
            message = f"at line {located['line']}: {located['msg']}"
        raise ConfigError(f"invalid JSONC {message}" if located else f"invalid JSONC: {message}",
                          file=file) from exc
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top level", file=file)
    _check_text(data, file)
    return data


def read_jsonc(path: Path) -> dict[str, Any]:
    """Read a JSONC (JSON with comments and trailing commas) object; errors name the file."""
    return parse_jsonc(read_config_text(path), str(path))


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file."""
    text = read_config_text(path)
    check_nesting(text, str(path))
    try:
        data = yaml.safe_load(text)
    except RecursionError as exc:
        raise ConfigError("invalid YAML: nested too deeply", file=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(
            f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", file=str(path)
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", file=str(path))
    _check_text(data, str(path))
    return data


def _check_text(data: dict[str, Any], file: str) -> None:
    """Refuse a lone surrogate (a ``"\\ud800"`` escape) anywhere in a parsed file."""
    problem = check_tree(data, max_depth=MAX_CONFIG_DEPTH + 1, root="(top)")
    if problem:
        raise ConfigError(problem, file=file)


