"""Text from outside that is not text: lone surrogates, and JSON nested without bound.

A JSON string may spell half of a UTF-16 pair (``"\\ud800"``); Python decodes it to a
``str`` holding a lone surrogate, which no UTF-8 encoder accepts: it used to travel into
a search and fail much later, as a 500 when the Result was serialised or a stream that
stopped without its ``done`` event. Invalid UTF-8 in command-line arguments arrives the
same way (``surrogateescape``). The edges refuse it (HTTP bodies, MCP tool arguments,
CLI arguments, configuration files, :class:`~agent_search.types.Request` itself) or, for
documents being ingested, replace it with U+FFFD.

Nesting is checked without recursion, so the check itself cannot overflow the stack.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
MAX_JSON_DEPTH = 64
"""Deepest nesting accepted in a request body (a real request needs about ten levels)."""


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or None."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    return text if lone_surrogate(text) is None else _SURROGATE.sub(REPLACEMENT, text)


def path_text(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (which Python keeps as lone
    surrogates, ``surrogateescape``) written as ``\\xNN``. Unlike a replacement
    character this keeps two such names apart (``caf\\xe9`` and ``caf\\xe8``)."""
    if lone_surrogate(name) is None:
        return name
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def surrogate_message(text: str, where: str) -> str | None:
    """A one-line refusal naming ``where`` when ``text`` holds a lone surrogate."""
    at = lone_surrogate(text)
    if at is None:
        return None
    return (f"{where}: character {at} is a lone surrogate (U+{ord(text[at]):04X}), "
            "which is not text; send valid UTF-8 (or paired \\u escapes)")


_SURROGATE_SPELLINGS = re.compile(rb"\\u[dD][89abcdefABCDEF]|\xed[\xa0-\xbf]")
"""How a surrogate can appear in JSON bytes: a ``\\uD800``-``\\uDFFF`` escape, or its
UTF-8-style encoding (``json.loads`` decodes bytes with ``surrogatepass``)."""


def may_hold_surrogates(raw: bytes) -> bool:
    """False when JSON ``raw`` cannot decode to a string holding a surrogate (valid pairs
    also answer True: :func:`check_tree` tells them apart)."""
    return _SURROGATE_SPELLINGS.search(raw) is not None


_CONTAINERS = (dict, list)


def too_deep(value: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Is a parsed JSON value nested deeper than ``max_depth``? Iterative, and visits
    containers only (a wide array of numbers costs one pass of ``isinstance``)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth >= max_depth:
            return True
        children = node.values() if type(node) is dict else node
        deeper = depth + 1
        stack.extend([(c, deeper) for c in children if type(c) in _CONTAINERS])
    return False


def check_tree(value: Any, *, max_depth: int = MAX_JSON_DEPTH,
               root: str = "body") -> str | None:
    """What is wrong with a parsed JSON value, as a one-line message naming the place,
    or None: nesting deeper than ``max_depth`` or a lone surrogate in a key or string.
    Iterative (the input may be nested as deep as the parser allowed)."""
    if isinstance(value, dict | list) and too_deep(value, max_depth):
        return f"{root}: nested deeper than {max_depth} levels"
    stack: list[tuple[Any, str]] = [(value, root)]
    while stack:
        node, where = stack.pop()
        problem = None
        if isinstance(node, str):
            problem = surrogate_message(node, where)
        elif isinstance(node, dict | list):
            problem = _key_problem(node, where)
            stack.extend(_children(node, where))
        if problem:
            return problem
    return None


def _key_problem(node: dict[Any, Any] | list[Any], where: str) -> str | None:
    """The first lone surrogate in the keys of ``node`` (a list has none)."""
    keys = node if isinstance(node, dict) else ()
    return next((problem for key in keys if isinstance(key, str)
                 if (problem := surrogate_message(key, f"{where} (a key)"))), None)


def _children(node: dict[Any, Any] | list[Any], where: str) -> list[tuple[Any, str]]:
    """The strings, objects and arrays inside ``node``, each with its place."""
    if isinstance(node, dict):
        return [(item, scrub(f"{where}.{str(key)[:40]}")) for key, item in node.items()
                if isinstance(item, str | dict | list)]
    return [(item, f"{where}.{i}") for i, item in enumerate(node)
            if isinstance(item, str | dict | list)]


def shown_number(value: object) -> str:
    """A value as a person reads it: a float rounded sensibly (an average of prices as
    124.93, not 124.927143; a small one to three significant digits, 0.0123), without
    trailing zeros; anything else as ``str``. Machine-readable copies (``data``) keep
    their precision; this is for text."""
    if not isinstance(value, float) or value != value or value in (float("inf"), -float("inf")):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value)) if abs(value) >= 1e4 else f"{value:g}"
    text = f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text
