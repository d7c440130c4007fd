"""The parser's state, explicit and in two parts.

- :class:`Question`: the question read against one target model (its text, the models,
  the candidate fields, where fields are named). Frozen: no extractor changes it.
- :class:`Plan`: what has been understood so far (conditions, orders, limit, notes,
  warnings, confidence) and which parts of the question are used up. Each extractor of
  :data:`~agent_search.query.nl._parser.EXTRACTORS` receives both and adds to the plan.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_search.language import CHINESE, ENGLISH, HAN_CHAR, normal_form
from agent_search.query.dsl import ModelSchema, RelationSchema
from agent_search.query.nl._lexicon import overlaps
from agent_search.query.nl._reading._schema import (
    Candidate,
    FieldMention,
    Span,
    candidates,
    field_mentions,
    title_field,
)

MAX_CONDITIONS = 16
"""Most conditions one query yields; the rest are ignored with a warning."""
NOTHING_CONFIDENCE = 0.2
"""The confidence of an answer that searches nothing (the parser is not sure)."""
EXACT_CONFIDENCE = 1.0


@dataclass(frozen=True, slots=True)
class Question:
    """The question as read against ``target``."""

    text: str
    """As asked (values are quoted from it with their case)."""
    low: str
    """Lower-cased, full-width letters and digits as ASCII: what the extractors match
    (position for position the same as ``text``)."""
    now: dt.datetime
    by_id: Mapping[str, ModelSchema]
    """Every model the question may reach, by lower-cased id."""
    models: Mapping[str, list[Span]]
    """Where each model is named."""
    target: ModelSchema
    candidates: list[Candidate]
    fields: list[FieldMention]
    """Where the candidate fields are named."""
    fuzzy_cutoff: float
    serials: Mapping[str, int]
    """Model id (lower-cased) → serial of its known values (the value index's cache key)."""
    chinese: bool = False
    """The question holds Chinese characters (the Chinese rules read it; others skip)."""

    @classmethod
    def about(cls, target: ModelSchema, *, text: str, now: dt.datetime,
              schemas: Sequence[ModelSchema], models: Mapping[str, list[Span]],
              fuzzy_cutoff: float, serials: Mapping[str, int]) -> Question:
        low = normal_form(text)  # "ＡＢＣ" is "abc", "訂單" is "订单"; one character for one
        by_id = {s.id.lower(): s for s in schemas}
        cands = candidates(target, by_id)
        return cls(text=text, low=low, now=now, by_id=by_id, models=models,
                   target=target, candidates=cands, fields=field_mentions(low, cands),
                   fuzzy_cutoff=fuzzy_cutoff, serials=serials,
                   chinese=HAN_CHAR.search(low) is not None)

    @property
    def language(self) -> str:
        """The name of the language record the question is read with: Chinese when it
        holds a Chinese character, else English (the rules of :data:`~._parser.READS`)."""
        return CHINESE.name if self.chinese else ENGLISH.name

    def quote(self, span: Span) -> str:
        """The words at ``span`` as asked."""
        return self.text[span[0]:span[1]]

    @property
    def own_mentions(self) -> list[FieldMention]:
        """Where the target's own fields are named (not a related model's)."""
        return [m for m in self.fields if m.candidate.relation is None]

    @property
    def own_field_spans(self) -> list[Span]:
        """Where the target's own fields are named."""
        return [m.span for m in self.own_mentions]

    @property
    def own_fields_named(self) -> list[FieldMention]:
        """The target's own fields named in full (not keys): what the question says of
        the target's rows."""
        return [m for m in self.own_mentions if m.strong and not m.candidate.field.primary]

    def titled_links(self) -> Iterator[tuple[RelationSchema, ModelSchema, str]]:
        """Each hasOne relation of the target to a model with a title field, that model
        and its title field: what the target's rows are named by through a link."""
        for rel in self.target.relations:
            other = self.by_id.get(rel.model.lower())
            title = title_field(other) if other is not None else None
            if rel.type == "hasOne" and other is not None and title is not None:
                yield rel, other, title

    @property
    def target_spans(self) -> list[Span]:
        """Where the target model is named."""
        return self.models.get(self.target.id, [])


@dataclass(slots=True)
class Plan:
    """What has been understood of a question about ``target`` so far."""

    target: ModelSchema
    used: list[Span]
    """Parts of the question already understood (model names count: they are no value)."""
    wheres: list[dict[str, Any]] = field(default_factory=list)
    orders: list[dict[str, str]] = field(default_factory=list)
    limit: int | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    confidence: float = EXACT_CONFIDENCE
    relax_confidence: float | None = None
    """The confidence left if the text match of leftover words finds nothing and is
    dropped (``relax``)."""
    evidence: float = 0.0
    """How much the question says about the target (picks the model when none is named)."""
    group_by: list[str] = field(default_factory=list)
    aggregates: list[str] = field(default_factory=list)
    """Written aggregates: ``count``, ``avg(Age)`` (:class:`~agent_search.query.dsl.Aggregate`)."""
    having: list[dict[str, Any]] = field(default_factory=list)
    aggregate_orders: list[dict[str, str]] = field(default_factory=list)
    count_implied: bool = False
    """The groups' count was added because nothing else was computed, not asked for."""
    answer_model: str | None = None
    """Set when the answer is computed on another model (the rows the target has many
    of, counted per target row): its id; conditions go through ``answer_relation``."""
    answer_relation: str | None = None
    unplaced: list[str] = field(default_factory=list)
    """Conditions the question states that could not be placed ("more than 2" with no
    field it could be about): the answer would not meet them, so none is given."""
    unsayable: list[str] = field(default_factory=list)
    """Conditions the question states that the DSL can't say (why, for each): the answer
    would not meet them, so none is given."""
    value_conditions: int = 0
    """Conditions on values (known values, text matches, counts): leftover words are then
    not matched as text."""

    @property
    def grouped(self) -> bool:
        """Answer rows are computed (groups or aggregates), not records shown."""
        return bool(self.aggregates or self.group_by)

    @property
    def only_counted(self) -> bool:
        """Groups with nothing computed but the count added for them (not asked for), and
        no condition on them or order of them yet."""
        return bool(self.group_by) and self.aggregates == ["count"] and self.count_implied \
            and not self.having and not self.aggregate_orders

    def draft(self, model: str, wheres: list[dict[str, Any]], *, terms: list[str],
              relax: bool, total_asked: bool) -> Draft:
        """What is understood, as the answer's draft on ``model``'s rows under ``wheres``
        (the target's, or the rows the answer is computed on): ``terms`` of a text match
        of leftover words, dropped when it finds nothing (``relax``)."""
        return Draft(
            model=model, wheres=wheres,
            orders=self.aggregate_orders if self.grouped else self.orders,
            group_by=self.group_by, aggregates=self.aggregates, having=self.having,
            limit=self.limit, terms=terms, total_asked=total_asked, relax=relax,
            relax_confidence=self.relax_confidence if relax else None,
            explanation=f"{self.target.id}: " + ("; ".join(self.notes) or "all records"),
            warnings=self.warnings, confidence=self.confidence)

    def stated(self) -> str:
        """Everything the plan states (conditions, orders, aggregates, groups, group
        conditions) as one text: where a field's name shows whether anything is said of
        it."""
        return " ".join(str(w) for w in self.wheres) + " ".join(
            o["field"] for o in self.orders) + " " + " ".join(self.aggregates) + " " + \
            " ".join(self.group_by) + " " + str(self.having)

    def free(self, span: Span) -> bool:
        """Nothing understood overlaps ``span`` yet."""
        return not any(overlaps(span, u) for u in self.used)

    def unclaimed(self, pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
        """Each match of ``pattern`` in ``text`` whose words nothing understood has used
        yet, checked as it is reached (what the rule makes of one match counts for the
        next): the walk every rule makes over its own words."""
        return (m for m in pattern.finditer(text) if self.free(m.span()))

    def full(self) -> bool:
        """At :data:`MAX_CONDITIONS` (warned once): further conditions are ignored."""
        if len(self.wheres) < MAX_CONDITIONS:
            return False
        self.warn(f"more than {MAX_CONDITIONS} conditions; the rest were ignored")
        return True

    def cannot_place(self, span: Span, said: str) -> None:
        """A condition stated at ``span`` that no field takes: its words are used up, and
        the question is answered by nothing (see :mod:`._unsure`)."""
        self.warn(f"could not tell which field {said!r} is about")
        self.used.append(span)
        self.unplaced.append(said)

    def cannot_say(self, span: Span, said: str, why: str) -> None:
        """A condition stated at ``span`` that the DSL can't say (``why``): its words are
        used up, and the question is answered by nothing (see :mod:`._unsure`)."""
        self.warn(f"{said!r}: {why}")
        self.used.append(span)
        self.unsayable.append(f"{said!r}: {why}")

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def add(self, path: str, op: str, value: Any, span: Span, note: str) -> None:
        """One condition from the words at ``span``."""
        if self.full():
            self.used.append(span)
            return
        self.wheres.append({"field": path, "op": op, "value": value})
        self.notes.append(note)
        self.evidence += 1.0
        self.used.append(span)

    def add_period(self, path: str, start: str, end: str, span: Span, text: str) -> None:
        """``start <= path < end`` from the words at ``span``."""
        self.wheres.append({"and": [{"field": path, "op": ">=", "value": start},
                                    {"field": path, "op": "<", "value": end}]})
        self.notes.append(f"{path} in [{start}, {end}) (\"{text}\")")
        self.evidence += 1.0
        self.used.append(span)

    def compute(self, name: str, why: str, *spans: Span) -> None:
        """Compute the aggregate ``name`` (once), understood from the words at ``spans``."""
        if name not in self.aggregates:
            self.aggregates.append(name)
            self.notes.append(f"{name} (\"{why}\")")
            self.evidence += 1.0
        self.used.extend(spans)

    def order(self, field_name: str, direction: str, span: Span, why: str) -> None:
        """Order by ``field_name`` (the first order stated on a field wins). Asked of each
        group ("the youngest person for each job") with nothing but the groups' count
        computed, it is the groups' extreme instead: ``min(age)`` per job."""
        if self.only_counted and "." not in field_name:
            self.aggregates = [f"{'min' if direction == 'asc' else 'max'}({field_name})"]
            self.notes.append(f"{self.aggregates[0]} of each group ({why})")
            self.used.append(span)
            return
        if any(o["field"] == field_name for o in self.orders):
            return
        self.orders.append({"field": field_name, "order": direction})
        self.notes.append(f"order by {field_name} {direction} ({why})")
        self.evidence += 1.0
        self.used.append(span)


@dataclass(slots=True)
class Draft:
    """The parser's answer to one question, typed until it is written as a DSL dict
    (:meth:`to_json`): the model the rows are taken from and what is said about them.
    The answer rules (retarget, the unused names) read and rewrite it by field, not by
    key."""

    model: str
    wheres: list[dict[str, Any]]
    orders: list[dict[str, str]]
    """Orders of records, or of the groups' rows when grouped."""
    explanation: str
    warnings: list[str]
    confidence: float
    group_by: list[str] = field(default_factory=list)
    aggregates: list[str] = field(default_factory=list)
    having: list[dict[str, Any]] = field(default_factory=list)
    limit: int | None = None
    terms: list[str] = field(default_factory=list)
    """Ranking terms of a text match of leftover words (none: no text match)."""
    total_asked: bool = False
    relax: bool = False
    relax_confidence: float | None = None

    @property
    def grouped(self) -> bool:
        """The database computes answer rows (groups or aggregates)."""
        return bool(self.group_by or self.aggregates)

    def to_json(self) -> dict[str, Any]:
        """The DSL dict of one query: a part only when it says something (``relax``'s
        confidence only beside ``relax``), groups and aggregates only when grouped."""
        grouped = {"group_by": self.group_by, "aggregates": self.aggregates,
                   **({"having": self.having} if self.having else {})}
        relax = {"relax": True, **({} if self.relax_confidence is None else
                                   {"relax_confidence": round(self.relax_confidence, 4)})}
        return {"model": self.model, "wheres": self.wheres,
                **(grouped if self.grouped else {}), "orders": self.orders,
                **({"limit": self.limit} if self.limit else {}),
                **({"terms": self.terms} if self.terms else {}),
                **({"total_asked": True} if self.total_asked else {}),
                **(relax if self.relax else {}),
                "explanation": self.explanation, "warnings": self.warnings,
                "confidence": round(self.confidence, 4)}


def silent(warnings: list[str], reason: str) -> dict[str, Any]:
    """Nothing searched, and why (after ``warnings``): rows that do not answer the
    question are worse than none (an agent cites them)."""
    return {"queries": [], "explanation": "not sure what is asked; nothing searched",
            "confidence": NOTHING_CONFIDENCE, "warnings": [*warnings, reason]}


Extractor = Callable[[Question, Plan], None]
"""One rule of the parser: reads the question, adds what it understood to the plan."""
