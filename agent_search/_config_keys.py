"""Where a configuration key is, and what was probably meant: the parts of a
:class:`~agent_search.errors.ConfigError` that let a user fix a typo without reading
the schema.

* :func:`key_line` — the line of a dotted key (``web.max_results``) in a JSONC or YAML
  file, so an error can point at it;
* :func:`known_keys` — the keys a pydantic settings model accepts at a location, for
  :func:`did_you_mean`;
* :func:`did_you_mean` — the closest of those names (``difflib``), or None.

Nothing here raises: a key that cannot be found simply has no line.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

_MAX_BYTES = 1_000_000  # the size limit of configuration files (config.MAX_CONFIG_BYTES)


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that ``word`` is a likely typo of, else None: a difference
    of case only, or ``difflib``'s ratio at least 0.7 (0.6 for a word of up to four
    characters, where one swapped pair already costs a third: "wbe" for "web"). The one
    rule behind every "did you mean" of the package (:func:`agent_search.errors.closest`):
    configuration keys, search types, collections, assistants, models, connectors."""
    names = sorted({c for c in choices if c and c != word})
    lowered = {n.lower(): n for n in names}
    if word.lower() in lowered:  # a difference of case only
        return lowered[word.lower()]
    cutoff = 0.6 if len(word) <= 4 else 0.7
    found = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[found[0]] if found else None


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of ``annotation`` (``X | None`` → ``[X]``; Annotated stripped)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [alt for arg in get_args(annotation) for alt in _unwrap(arg)
                if alt is not type(None)]
    return [annotation]


def known_keys(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys ``model`` accepts inside the mapping at ``loc`` (the location of an
    error without its last part); empty when ``loc`` leads out of declared models."""
    current: list[Any] = [model]
    for part in loc:
        current = [following for candidate in current
                   for following in _inside(candidate, str(part))]
    return [key for candidate in current if _is_model(candidate)
            for key in candidate.model_fields]


def _is_model(candidate: Any) -> bool:
    return isinstance(candidate, type) and issubclass(candidate, BaseModel)


def _inside(candidate: Any, part: str) -> list[Any]:
    """The types found at ``part`` inside ``candidate``: a model's field, or the value
    or item type of a mapping, list or tuple."""
    if _is_model(candidate):
        field = candidate.model_fields.get(part)
        return [] if field is None else _unwrap(field.annotation)
    if get_origin(candidate) in (dict, list, tuple) and get_args(candidate):
        return _unwrap(get_args(candidate)[-1])
    return []


def key_line(file: str | Path, key: str) -> int | None:
    """The 1-based line of dotted ``key`` in configuration ``file`` (YAML by its suffix,
    JSONC otherwise); None when the file or the key cannot be found."""
    path = Path(file)
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    parts = [p for p in key.split(".") if p]
    if not parts:
        return None
    if path.suffix in (".yml", ".yaml"):
        return _yaml_line(text, parts)
    return _jsonc_line(text, parts)


def _yaml_line(text: str, parts: list[str]) -> int | None:
    try:
        node: Any = yaml.compose(text)
    except (yaml.YAMLError, RecursionError):
        return None
    line: int | None = None
    for part in parts:
        found = _yaml_child(node, part)
        if found is None:
            return line
        line, node = found
    return line


def _yaml_child(node: Any, part: str) -> tuple[int, Any] | None:
    """The 1-based line and the node of key (or list index) ``part`` under ``node``."""
    if isinstance(node, yaml.MappingNode):
        return next(((k.start_mark.line + 1, v) for k, v in node.value
                     if getattr(k, "value", None) == part), None)
    if isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
        child = node.value[int(part)]
        return child.start_mark.line + 1, child
    return None


_STRING_OR_COMMENT = re.compile(
    r""""(?:\\.?|[^"\\])*(?:"|\Z)|'(?:\\.?|[^'\\])*(?:'|\Z)|//[^\n]*|/\*.*?(?:\*/|\Z)""",
    re.DOTALL)
"""A string (to its closing quote, or the end of an unclosed one) or a comment: one
pass left to right finds each where it starts, so a ``//`` in a string stays text."""


def _blank_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments (outside strings) blanked, same
    length and line breaks, so positions still count lines."""
    return _STRING_OR_COMMENT.sub(_blank_comment, text)


def _blank_comment(match: re.Match[str]) -> str:
    found = match.group()
    return found if found[0] in "\"'" else re.sub(r"[^\n]", " ", found)


def _jsonc_line(text: str, parts: list[str]) -> int | None:
    """Each key of the path is looked for after the previous one (list indexes are
    skipped): right for the files people write, where a key's parent comes first."""
    clean = _blank_comments(text)
    pos, line = 0, None
    for part in parts:
        if part.isdigit():
            continue
        pattern = re.compile(r"""(?:^|[\s{,])(["']?)""" + re.escape(part) + r"""\1\s*:""")
        match = pattern.search(clean, pos)
        if match is None:
            return line
        pos = match.end()
        line = clean.count("\n", 0, match.start(1)) + 1
    return line
