"""A calibrated confidence of the builtin reading: the chance its rows are the ones asked
for, the same on any schema, and the floor under which nothing is searched.

The parser's own ``confidence`` scales item scores (how sure each condition is); it says
little about whether the reading *as a whole* accounts for the question. This module
reads features of the finished reading that mean the same on any schema — how much of the
question it used, how each name was matched (spelled, or by meaning and how closely), a
text match of words it could not place, a table it had to guess, an aggregate the words
do not ask for or words asking for one it did not compute — and turns them into a
probability with a logistic model of a few coefficients (:data:`COEFFICIENTS`).

The coefficients were fitted by ``bench/fit_db_confidence.py`` (plain numpy: gradient
descent on the cross-entropy, small L2) on the *working* part of the held-out databases
only (``bench/build_db_unseen.py``), each question answered (relevance floor off)
labelled with how right its answer is: the precision of its rows, or right / wrong for a
"how many" or an aggregate; the locked part was not used, the public Spider databases
only to decide that grouped readings are not gated (:data:`THRESHOLDS`).
:data:`THRESHOLDS`, one per kind of answer, were chosen there too, on
leave-one-database-out probabilities: each floor maximises the sum, over the answers it
keeps, of how right each is minus 0.90 (an answer less likely right than the precision
asked of all is worth less than silence); see :data:`THRESHOLDS` for the kinds not gated.
Refit after a change to the parser: run that script and paste its output here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_search.language import normal_form
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._answer._consistency import queries_of, unaccounted
from agent_search.query.nl._plan import NOTHING_CONFIDENCE
from agent_search.query.nl._reading._schema import model_mentions

FEATURES: tuple[str, ...] = ("bias", "confidence", "left_over", "by_meaning", "text_match",
                             "fallback", "grouped", "counted", "conditions", "across",
                             "unnamed", "shape")
"""The features of a reading, in the order of :data:`COEFFICIENTS` (see :func:`features`)."""

COEFFICIENTS: tuple[float, ...] = (1.800, 1.006, -1.279, -0.072, -0.937, -0.801, -0.068,
                                   -0.178, 0.344, -0.294, -0.399, -0.405)
"""Logistic-regression weights of :data:`FEATURES` (fitted: see the module docstring; 354
answered questions of the 17 working databases, mean label 0.86)."""

THRESHOLDS: dict[str, float] = {"records": 0.80, "count": 0.0, "grouped": 0.0, "text": 0.0}
"""Readings whose calibrated confidence is under the floor of their kind
(:func:`kind_of`) search nothing.

- Records: as fitted, on the working part's record and text-match answers together (both
  are "records answered"); out of fold there, 164 answered at 0.966 precision become 157
  at 0.983 (those dropped were 57 % right).
- Text matches (rows ranked by the words of the question they hold, said so in a warning,
  scored by that share under the relevance floor): not gated — "laptops by Apex",
  "tracks with love in the title" are what they are for, and their scores already say how
  much of the question each row holds.
- Counts: the fit's floor (0.95) would silence all but one of the 42 counts answered on
  the working part — right 86 % of the time at every lower floor: the features do not tell
  the right ones from the wrong — so not gated until a feature does.
- Grouped numbers: the fit's floor (0.92, from 83 grouped answers of the working part:
  0.916 → 0.980 right, 49 kept) is too few answers to set it; an earlier floor of the
  same kind silenced right answers on the public databases (aggregates right 0.58 →
  0.42, every grouping across a relation): not gated.
"""

_AGGREGATE_WORDS = re.compile(
    r"\b(?:how many|number of|count|counts|each|per|every|average|avg|mean|total|sum|"
    r"maximum|minimum|max|min|most|least|fewest)\b")
"""Words that ask for a number computed over rows (grammar, not a schema)."""


@dataclass(frozen=True, slots=True)
class Assessment:
    """A reading's features, its calibrated confidence, and what lowered it most; and a
    reason its shape is not the one the words ask for (:mod:`._consistency`), if any."""

    features: Mapping[str, float]
    probability: float
    unaccounted: str | None = None

    def reasons(self) -> list[str]:
        """The features that cost the most, worst first, said in words."""
        cost = sorted(((w * self.features[n], n) for n, w in zip(FEATURES, COEFFICIENTS,
                                                                 strict=True)
                       if n != "bias" and w * self.features[n] < 0))
        return [_SAID[n](self.features[n]) for _, n in cost[:3]]


_SAID: dict[str, Any] = {
    "confidence": lambda v: f"the parser's own confidence {v:.2f}",
    "left_over": lambda v: f"{v:.0%} of the question's content words left unused",
    "by_meaning": lambda v: f"a name matched by meaning only (similarity {1 - v:.2f})",
    "text_match": lambda v: "words matched as text, not as a condition",
    "fallback": lambda v: "nothing recognised but a text match",
    "grouped": lambda v: "an aggregate over groups",
    "counted": lambda v: "a count of records",
    "conditions": lambda v: "several conditions",
    "across": lambda v: "a condition or group across a relation",
    "unnamed": lambda v: "a table the question does not name",
    "shape": lambda v: "an aggregate the words do not ask for, or one they ask for "
                       "that was not computed",
}


def _fields(node: Any) -> list[str]:
    """Every field name a where, order, group or aggregate states (a string anywhere in
    it but a compared value: a condition's ``field`` among them)."""
    if isinstance(node, Mapping):
        return [f for k, v in node.items() if k != "value" for f in _fields(v)]
    if isinstance(node, list):
        return [f for v in node for f in _fields(v)]
    return [node] if isinstance(node, str) else []


def content_count(query: str) -> int:
    """Content words of the question (as the parser counts them)."""
    from agent_search.query.nl._parser import content_words  # the parser imports us
    return content_words(normal_form(query))


def features(query: str, out: Mapping[str, Any], leftover: Sequence[str],
             similarity: float | None, schemas: Sequence[ModelSchema]) -> dict[str, float]:
    """The features of the reading ``out`` of ``query``: ``leftover`` are the words it did
    not use, ``similarity`` the lowest of the names it read by meaning (None: none)."""
    queries = queries_of(out)
    low = normal_form(query)
    content = max(1, content_count(query))
    grouped = _stated(queries, "group_by", "aggregates")
    counted = _stated(queries, "total_asked")
    stated = [f for q in queries for k in ("wheres", "group_by", "aggregates")
              for f in _fields(q.get(k))]
    named = model_mentions(low, schemas)
    asks_number = bool(_AGGREGATE_WORDS.search(low))
    return {
        "bias": 1.0,
        "confidence": float(out.get("confidence", 1.0)),
        "left_over": min(1.0, len(leftover) / content),
        "by_meaning": 0.0 if similarity is None else max(0.0, 1.0 - similarity),
        "text_match": float(_stated(queries, "terms")),
        "fallback": float(bool(out.get("fallback"))),
        "grouped": float(grouped),
        "counted": float(counted),
        "conditions": min(sum(len(q.get("wheres") or []) for q in queries), 4) / 4,
        "across": float(any("." in f for f in stated)),
        "unnamed": float(any(not named.get(str(q.get("model", ""))) for q in queries)),
        "shape": float(asks_number != (grouped or counted)),
    }


def _stated(queries: Sequence[Mapping[str, Any]], *keys: str) -> bool:
    """Some query states one of ``keys`` (a non-empty value)."""
    return any(q.get(k) for q in queries for k in keys)


def kind_of(x: Mapping[str, float]) -> str:
    """The kind of answer a reading gives (each kind has its floor): ``grouped`` numbers,
    a ``count`` of records, rows ranked by a ``text`` match, or the ``records`` that meet
    its conditions."""
    if x["grouped"]:
        return "grouped"
    if x["counted"]:
        return "count"
    return "text" if x["text_match"] or x["fallback"] else "records"


def probability(x: Mapping[str, float]) -> float:
    """The logistic model's probability for features ``x``."""
    z = sum(w * x[n] for n, w in zip(FEATURES, COEFFICIENTS, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def assess(query: str, out: Mapping[str, Any], leftover: Sequence[str],
           similarity: float | None, schemas: Sequence[ModelSchema]) -> Assessment:
    """The calibrated confidence of the reading ``out`` (see :func:`features`)."""
    x = features(query, out, leftover, similarity, schemas)
    return Assessment(features=x, probability=probability(x),
                      unaccounted=unaccounted(query, out, schemas))


def gated(out: dict[str, Any], assessment: Assessment,
          threshold: float | None = None) -> dict[str, Any]:
    """``out`` as read, or — its calibrated confidence under ``threshold`` (default: the
    floor of its kind in :data:`THRESHOLDS`) or its shape not the one the words ask for
    (whatever the floor) — nothing searched and a warning saying why: rows of a reading
    that does not account for the question are worse than none."""
    if not queries_of(out):
        return out
    if assessment.unaccounted is not None:
        return _silent(out, assessment.unaccounted)
    floor = THRESHOLDS[kind_of(assessment.features)] if threshold is None else threshold
    if assessment.probability >= floor:
        return out
    why = "; ".join(assessment.reasons()) or "no single cause"
    return _silent(out, f"calibrated confidence {assessment.probability:.2f} is under "
                        f"{floor:.2f} ({why}); no records are shown")


def _silent(out: Mapping[str, Any], warning: str) -> dict[str, Any]:
    return {"queries": [], "explanation": "not sure the reading accounts for the question; "
            "nothing searched", "confidence": NOTHING_CONFIDENCE,
            "warnings": [*out.get("warnings", []), warning]}
