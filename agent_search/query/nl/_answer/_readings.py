"""A second reading that gives other rows: two relations to one model, neither named.

A table that points twice at one other table (``routes.src_apid`` and ``routes.dst_apid``
both at ``airports``; ``match.home_team`` and ``match.away_team``) can be joined either
way, and the two joins give different rows: "airports with the most routes" counts
departures or arrivals. When the answer goes through one of two such relations and the
question says nothing that tells them apart, the reading is a guess between two answers,
so the question is answered by nothing (right or silent).

What tells them apart are the words of each relation's own column that the other's does
not share, less the words of the models at either end and their other forms
(``dst_apid`` → ``dst``; ``src_apid`` → ``src``; ``friend_id`` on ``Friend`` and
``liked_id`` on ``Likes`` → nothing: the table is named for them). A word
is said when the question has it, in either number, or a word it abbreviates: the
abbreviation's letters in order, the first one first ("dst" in "destination", "src" in
"source"). Relations whose words are all shared (a plain one among them) are not checked:
the catalog names the plain one after the table, as a reader would.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._answer._stated import NAMES_IN_VALUES
from agent_search.query.nl._lexicon import stem, word_spans, words_of
from agent_search.query.nl._plan import Question
from agent_search.query.nl._reading._schema import Candidate, every_span, overlaps_any

_NAME = re.compile(r"[A-Za-z_][\w.]*")
_GENERIC = frozenset({"id", "ids", "no", "num", "code", "key", "ref", "fk"})


def unnamed_relation(q: Question, out: dict[str, Any]) -> str | None:
    """A reason to answer nothing when ``out`` (one DSL query) goes through one of two
    relations to the same model and the question names neither. When it names another
    one only ("routes from a *source* airport in Canada" read through ``dst_ap``), ``out``
    is rewritten in place to go through that one, with a note."""
    model = q.by_id.get(str(out.get("model", "")).lower())
    if model is None:
        return None
    said = _question_words(q.low)
    for rel in list(_relations_used(model, out)):
        choice = _Choice.of(q, model, rel)
        if choice is None or any(_said(w, said) for w in choice.own):
            continue
        named = choice.named(said)
        if len(named) == 1:
            _swap(out, rel, named[0])
            continue
        return choice.reason(model)
    return None


@dataclass(frozen=True, slots=True)
class _Choice:
    """A relation the query goes through (``rel``) and its siblings to the same model,
    each with the words that tell it apart (see the module)."""

    rel: RelationSchema
    own: set[str]
    others: list[tuple[RelationSchema, set[str]]]

    @classmethod
    def of(cls, q: Question, model: ModelSchema, rel: RelationSchema) -> _Choice | None:
        """The choice ``rel`` is one of, or None when it has no sibling or a plain
        relation is among them (the catalog's reading stands)."""
        siblings = [r for r in model.relations if r.type == rel.type
                    and r.model.lower() == rel.model.lower() and r.name != rel.name]
        own = _distinct_words(q, model, rel)
        others = [(r, _distinct_words(q, model, r)) for r in siblings]
        if not siblings or not own or not all(words for _, words in others):
            return None
        return cls(rel, own, others)

    def named(self, said: set[str]) -> list[RelationSchema]:
        """The siblings the question names."""
        return [r for r, words in self.others if any(_said(w, said) for w in words)]

    def reason(self, model: ModelSchema) -> str:
        columns = ", ".join(_column(r) for r in [self.rel, *(r for r, _ in self.others)])
        return (f"the question does not say which of {len(self.others) + 1} relations of "
                f"{model.id} to {self.rel.model} is meant ({columns}); each gives other rows, "
                "so none are shown")


def _swap(out: dict[str, Any], old: RelationSchema, new: RelationSchema) -> None:
    """Every path through ``old`` (its name, or its own column) goes through ``new``."""
    names = {old.name: new.name}
    if old.type == "hasOne":
        names[old.foreign] = new.foreign
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?![\w])")

    def fix(text: str) -> str:
        return pattern.sub(lambda m: names[m.group(1)], text)

    for key in ("wheres", "orders", "group_by", "aggregates", "having"):
        if key in out:
            out[key] = _rewrite(out[key], fix)
    out["explanation"] = (f"{out.get('explanation', '')}; through {new.name} "
                          f"({_column(new)}), the relation the question names").lstrip("; ")


def _rewrite(value: Any, fix: Callable[[str], str]) -> Any:
    """``value`` (a DSL part) with ``fix`` applied to every field and aggregate name."""
    if isinstance(value, dict):
        return {k: (fix(v) if k in ("field", "aggregate") and isinstance(v, str)
                    else _rewrite(v, fix) if k in ("or", "and", "value") else v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [fix(v) if isinstance(v, str) else _rewrite(v, fix) for v in value]
    return value


def _relations_used(model: ModelSchema, out: dict[str, Any]) -> Iterator[RelationSchema]:
    """The relations of ``model`` the query goes through: a path's first step
    (``dst_ap.country``, ``count(routes)``) or a field that is a relation's own column."""
    names: set[str] = set()
    for text in NAMES_IN_VALUES.strings(out):
        for m in _NAME.finditer(text):
            names.add(m.group(0).split(".")[0].lower())
    seen: set[str] = set()
    for rel in model.relations:
        column = rel.foreign if rel.type == "hasOne" else ""
        if (rel.name.lower() in names or column.lower() in names) and rel.name not in seen:
            seen.add(rel.name)
            yield rel


def _column(rel: RelationSchema) -> str:
    return rel.foreign if rel.type == "hasOne" else rel.key


def _distinct_words(q: Question, model: ModelSchema, rel: RelationSchema) -> set[str]:
    """The words of the relation's own column, less generic ones and the words (or
    abbreviations) of the models at either end."""
    ends = _end_words(model.id, rel.model)
    out = set()
    for word in words_of(_column(rel)).split():
        word = re.sub(r"id$", "", word) if len(word) > 3 else word
        if word and word not in _GENERIC and not any(_same_word(word, e) for e in ends):
            out.add(word)
    return out


def _end_words(*models: str) -> set[str]:
    """The words of the models' names, and their stems."""
    ends = {w for m in models for w in words_of(m).split()}
    return ends | {stem(w) for w in ends}


def _same_word(word: str, end: str) -> bool:
    """``word`` is ``end``, another form of it ("liked" of ``Likes``) or its abbreviation."""
    a, b = stem(word), stem(end)
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))) \
        or _abbreviates(word, end)


def _question_words(low: str) -> set[str]:
    return {w for word, _, _ in word_spans(low) for w in (word, stem(word))}


def _said(word: str, said: set[str]) -> bool:
    return word in said or stem(word) in said or any(_abbreviates(word, w) for w in said)


def _abbreviates(short: str, word: str) -> bool:
    """``short`` is ``word`` abbreviated: shorter, same first letter, its letters in
    order ("dst" → "destination", "ap" → "airports")."""
    if not (2 <= len(short) < len(word)) or short[0] != word[0]:
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in short[1:])


def asked_elsewhere(q: Question, used: list[tuple[int, int]],
                    out: dict[str, Any]) -> str | None:
    """A reason to answer nothing when the question names (in full) a field that only a
    related table has, and the reading neither shows that table's rows nor uses the
    field ("the host *year* of city X" answered with the city; "the *weights* of
    entrepreneurs" with the entrepreneurs; "what *region* is Kabul in" with the city):
    the rows shown do not hold what is asked. A field is used when a condition, order,
    group or aggregate states it, or an extractor took its words; a table's name is not
    a field's, nor a column that joins ("channels" for ``Cartoon.Channel``); and beside
    a field of the rows' own ("titles of songs and names of singers") the rows point at
    the row that holds the other. A phrase that names several fields is asked elsewhere
    only when each of them is."""
    model = q.by_id.get(str(out.get("model", "")).lower())
    if model is None:
        return None
    taken = [*used, *every_span(q.models)]
    shown = _Shown(model, {s.rsplit(".", 1)[-1].lower() for s in NAMES_IN_VALUES.strings(out)},
                   any(m.strong and m.candidate.schema.id == model.id for m in q.fields))
    for span, cands in _named_in_full(q, taken).items():
        if all(not shown.holds(q, c) for c in cands):
            c = cands[0]
            return (f"{q.quote(span)!r} names {c.schema.id}.{c.field.name}, which the rows "
                    f"of {model.id} shown do not hold and the reading does not use; no "
                    "records are shown (they would not be what is asked)")
    return None


def _named_in_full(q: Question, taken: list[tuple[int, int]]
                   ) -> dict[tuple[int, int], list[Candidate]]:
    """The fields the question names in full outside ``taken``, by the phrase naming
    them."""
    by_span: dict[tuple[int, int], list[Candidate]] = {}
    for span, cand, strong in q.fields:
        if strong and not overlaps_any(span, taken):
            by_span.setdefault(span, []).append(cand)
    return by_span


@dataclass(frozen=True, slots=True)
class _Shown:
    """What the answer shows: its model's rows, the fields the reading states, and
    whether a field of the rows' own is asked too."""

    model: ModelSchema
    stated: set[str]
    own_asked: bool

    def holds(self, q: Question, cand: Candidate) -> bool:
        """The answer shows or uses ``cand``'s field (see :func:`asked_elsewhere`)."""
        name, rel = cand.field.name, cand.relation
        return rel is None or cand.schema.id == self.model.id or \
            self.model.field(name) is not None or q.target.field(name) is not None or \
            name.lower() in self.stated or name == rel.key or \
            (self.own_asked and rel.type == "hasOne" and cand.second is None)
