"""Yes/no fields named as what they say: "official languages" → ``IsOfficial`` true,
"channels without high definition" → false.

A field is a flag when its kind is boolean, or when its known values are exactly one way
of writing yes and one of no ("T"/"F", "yes"/"no", "Y"/"N", "1"/"0"), as databases keep
them in text columns. Naming the field (its name without "is"/"has") asks for the rows
where it holds; a negation right before it, for the rows where it does not.
"""

from __future__ import annotations

import re
from typing import Any

from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import FieldMention

_SAYS: dict[str, bool] = {**dict.fromkeys(("t", "true", "y", "yes", "1"), True),
                          **dict.fromkeys(("f", "false", "n", "no", "0"), False)}
"""How a flag's stored values write yes and no."""
_NOT = re.compile(r"(?:\bnot|\bno|\bwithout|\bnon|n[’']t)[\s-]+(?:an?\s+|the\s+)?$", re.I)


def flag_values(kind: str, values: list[str]) -> tuple[Any, Any] | None:
    """The stored (yes, no) of a flag field, or None when the field is no flag."""
    if kind == "boolean":
        return True, False
    says = {_SAYS.get(v.strip().lower()): v for v in values}  # yes / no / None → value
    return (says[True], says[False]) if len(values) == 2 and set(says) == {True, False} \
        else None


def flags(q: Question, plan: Plan) -> None:
    """``field = yes`` (or no, negated) for each flag field named and not yet used."""
    done: set[str] = set()
    for mention in sorted(q.fields, key=lambda m: (m.span[0], not m.strong)):
        cand = mention.candidate
        if cand.second is not None or cand.path in done or not plan.free(mention.span):
            continue
        stored = flag_values(cand.field.kind, cand.field.values)
        if stored is None or not _names_the_flag(q, mention):
            continue
        start = max(0, mention.span[0] - 12)
        negated = _NOT.search(q.low[start:mention.span[0]])
        value = stored[1] if negated else stored[0]
        done.add(cand.path)
        # the negation is part of what was read (the parse is sure of it)
        span = (start + negated.start(), mention.span[1]) if negated else mention.span
        plan.add(cand.path, "=", value, span,
                 f"{cand.path} = {value!r} (\"{q.quote(mention.span)}\")")
        plan.value_conditions += 1


def _names_the_flag(q: Question, mention: FieldMention) -> bool:
    """The words are the field's own (not a key nor a word it shares with others)."""
    words = q.low[mention.span[0]:mention.span[1]].split()
    return bool(words) and all(len(w) > 2 for w in words)
