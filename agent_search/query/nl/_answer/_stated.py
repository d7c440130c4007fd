"""One walker of a DSL query's parts: the names it states, or the values it compares with.

The shape checks (:mod:`._consistency`) and the second-reading checks (:mod:`._readings`)
each read what a query says: the fields, groups and aggregates it names, or the strings
its conditions compare with. They differ only in which keys hold a string, which hold a
list of strings, and which hold more of the query; :class:`Walk` is that table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Walk:
    """Which keys of a DSL query hold a string (``one``), a list of strings (``many``),
    or more of the query to walk (``nested``)."""

    one: frozenset[str]
    many: frozenset[str]
    nested: frozenset[str]

    def strings(self, node: Any) -> Iterator[str]:
        """Every string ``node`` (a query, or a list of its parts) holds under the keys."""
        for key, inner in _entries(node):
            if key in self.one and isinstance(inner, str):
                yield inner
            elif key in self.many and isinstance(inner, list):
                yield from (x for x in inner if isinstance(x, str))
            elif key in self.nested:
                yield from self.strings(inner)


_ITEM = ""
"""The key a list's items are walked under (every walk descends into a list)."""

_PARTS = frozenset({_ITEM, "wheres", "having", "or", "and"})

NAMES = Walk(one=frozenset({"field", "aggregate"}), many=frozenset({"group_by", "aggregates"}),
             nested=_PARTS | {"orders"})
"""The fields, aggregates and groups a query states (values excluded)."""
NAMES_IN_VALUES = Walk(one=NAMES.one, many=NAMES.many, nested=NAMES.nested | {"value"})
"""The same, also inside a value that is itself a query part."""
VALUES = Walk(one=frozenset({"value"}), many=frozenset({"value"}), nested=_PARTS)
"""The strings the conditions compare with."""


def _entries(node: Any) -> Iterable[tuple[str, Any]]:
    """A mapping's items; a list's (or tuple's) items under :data:`_ITEM`."""
    if isinstance(node, Mapping):
        return node.items()
    if isinstance(node, list | tuple):
        return ((_ITEM, inner) for inner in node)
    return ()
