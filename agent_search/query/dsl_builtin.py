"""The builtin natural language → QueryDSL generator: rules, no LLM.

It reads the query against the model schemas and the known values of their categorical
fields, and understands:

- which model is meant: the one named first (singular or plural: "tracks", "invoice
  lines"), or, when none is named, the one the query says most about (its values, fields
  and amounts; ties go to the model listed first);
- equality on categorical fields, matched to real values case-insensitively, fuzzily
  (rapidfuzz) for misspellings, directly or one hop through a relation ("tracks in the
  Jazz genre" → ``genre.Name = 'Jazz'``, "invoices of customers in Brazil" →
  ``customer.Country = 'Brazil'``); several values of one field become ``in``;
  "not"/"except" before a value negates it;
- numeric comparisons with currency and units ("under $100", "more than 5", "between 10
  and 20", "longer than 5 minutes" on a field whose unit is ms/s/min/h);
- dates ("after 2024-03-01", "before 2023", "in 2024") and relative ones ("in the last 30
  days", "this month", "last year", "yesterday"; ``now`` is injectable);
- text match: quoted text, "named/called/titled X", "containing X" → ``like`` on the
  mentioned text field or the model's title field;
- ordering and top-N ("the 5 most expensive", "latest", "cheapest", "in alphabetical
  order", "sorted by total desc").

Words left over when no value was recognised become a text match on the model's title and
content fields (or a related model's title: "orders of headphones" → ``product.name``),
with ranking ``terms`` and ``relax`` (dropped if it finds nothing: "music genres"). A query
naming no model and stating nothing falls back to a text match on every model
(``fallback: true``, confidence 0.5), or, with ``strict``, is an error. Work is bounded:
the first 500 characters are analysed and at most 16 conditions kept.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from rapidfuzz import fuzz, process

from agent_search.query.dsl import (
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    TEXT_KINDS,
    DSLGenerationError,
    FieldSchema,
    ModelSchema,
    RelationSchema,
)
from agent_search.query.nl.dates import date_bounds as _date_bounds
from agent_search.query.nl.dates import is_year as _is_year
from agent_search.query.nl.dates import period_start as _period_start
from agent_search.query.nl.dates import shift as _shift
from agent_search.query.nl.lexicon import STOPWORDS, words_of
from agent_search.query.nl.lexicon import WORD as _WORD
from agent_search.query.nl.lexicon import adjacent as _adjacent
from agent_search.query.nl.lexicon import escape_like as _escape_like
from agent_search.query.nl.lexicon import find_phrase as _find_phrase
from agent_search.query.nl.lexicon import overlaps as _overlaps
from agent_search.query.nl.lexicon import plural_forms as _plural_forms
from agent_search.query.nl.lexicon import terms as _terms

FUZZY_CUTOFF = 88.0
"""Minimum rapidfuzz ratio (0..100) for a misspelt query word to stand for a known value."""
MIN_FUZZY_CHARS = 6
"""Shorter words are only matched exactly ("word" is not a misspelt "World")."""
EXACT_CONFIDENCE = 1.0
TIE_MARGIN = 0.2
AMBIGUOUS_CONFIDENCE = 0.9
"""A parse that kept several readings of one value is less sure than an exact one."""
"""Exact matches of the same words in two fields whose preferences differ by less are
both kept, as an ``or``."""
VARIANT_CONFIDENCE = 0.97
"""A value matched in another number ("computer" for "computers")."""
MAX_ANALYSED_CHARS = 500
"""Longer queries are analysed on their first 500 characters (bounded work per search)."""
INLINE_CHARS = 200
INLINE_VALUES = 2_000
"""Queries up to INLINE_CHARS long, against schemas with at most INLINE_VALUES known values,
are parsed on the event loop (about a millisecond); anything bigger in a worker thread
(fuzzy matching costs query length × values)."""
MAX_CONDITIONS = 16
"""Most conditions one query yields; the rest are ignored with a warning."""
MAX_TEXT_FIELDS = 4
"""Most fields one text match searches (title, content, then other free-text fields)."""
FALLBACK_CONFIDENCE = 0.5
NOTHING_CONFIDENCE = 0.2


_QUOTED = re.compile(r"\"([^\"]{1,200})\"|“([^”]{1,200})”|'([^']{1,200})'")
_NUM = (r"(?P<cur>[$€£¥])?\s*(?P<num>-?\d{1,15}(?:[.,]\d{1,15})?)\s*(?P<mult>k|m|thousand|million)?"
        r"(?:\s*(?P<unit>milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|"
        r"bytes|kb|mb|gb|usd|dollars?|eur|euros?|gbp|pounds?|percent|%))?\b")
_CMP_WORDS: tuple[tuple[str, str], ...] = (
    (r"between", "between"),
    (r"(?:less|fewer|lower|cheaper|shorter|smaller|younger|earlier) than|under|below|"
     r"beneath|<", "<"),
    (r"at most|no more than|not more than|up to|a maximum of|maximum|<=", "<="),
    (r"(?:more|greater|higher|bigger|larger|longer|older|pricier|costlier|later) than|"
     r"exceeding|exceeds|over|above|>", ">"),
    (r"at least|no less than|not less than|a minimum of|minimum|>=", ">="),
    (r"equal to|exactly|costing|priced at|=", "="),
)
_CMP = re.compile(r"\b(?P<cmp>" + "|".join(f"(?:{w})" for w, _ in _CMP_WORDS) + r")\s*"
                  + _NUM, re.I)
_BETWEEN = re.compile(r"\bbetween\s+" + _NUM.replace("?P<", "?P<a_") + r"\s+and\s+"
                      + _NUM.replace("?P<", "?P<b_"), re.I)
_OR_MORE = re.compile(_NUM + r"\s+or\s+(?P<dir>more|less|fewer|higher|lower|above|below)\b",
                      re.I)
_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}(?:[ t]\d{2}:\d{2}(?::\d{2})?)?|\d{4}-\d{2}|(?:19|20)\d{2})"
_MONTH_NAMES = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
                r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                      "sep", "oct", "nov", "dec"), start=1)}
_MONTH_DATE = re.compile(r"\b(?:(?P<cmp>after|since|from|before|until|till|by|in|during)\s+)?"
                         r"(?P<mon>" + _MONTH_NAMES + r")(?:\s+(?:of\s+)?(?P<year>(?:19|20)\d{2}))?"
                         r"(?![\w-])", re.I)
_RANGE_END = (r"(?:(?P<{p}mon>" + _MONTH_NAMES + r")(?:\s+(?P<{p}year>(?:19|20)\d{{2}}))?|"
              r"(?P<{p}iso>\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}-\d{{2}}|(?:19|20)\d{{2}}))")
_DATE_RANGE = re.compile(r"\b(?:from|between)\s+" + _RANGE_END.format(p="a_")
                         + r"\s*(?:to|and|until|till|through|-|–)\s*"
                         + _RANGE_END.format(p="b_") + r"(?![\w-])", re.I)
_DATE_CMP = re.compile(r"\b(?P<cmp>after|since|from|before|until|till|by|in|during)\s+"
                       + _DATE + r"\b", re.I)
_REL_N = re.compile(r"\b(?:in\s+|within\s+|during\s+)?(?:the\s+)?(?:last|past|previous)\s+"
                    r"(?P<n>\d{1,4})\s+(?P<u>days?|weeks?|months?|years?)\b", re.I)
_REL_ONE = re.compile(r"\b(?P<which>this|last|past|previous)\s+(?P<u>day|week|month|year)\b|"
                      r"\b(?P<word>today|yesterday)\b", re.I)
_COUNT = re.compile(r"\b(?:how many|number of|count(?:s|ing)?)\b", re.I)
_AGGREGATE = re.compile(r"\b(?:average|avg|mean|sum|median)\b", re.I)
_TOP = re.compile(r"\b(?:top|first|last|the)\s+(?P<n>\d{1,4})\b", re.I)
_NAMED = re.compile(r"\b(?:named|called|titled)\s+"
                    r"(?P<v>[\w][\w'’&.-]*(?:\s+[\w][\w'’&.-]*){0,3})", re.I)
_CONTAINS = re.compile(r"\b(?:(?:contain|contains|containing|including|includes|matching|like)"
                       r"\s+(?:(?:the|a|an)\s+)*(?:(?:word|letter|text)\s+)?|with\s+(?:the\s+|a"
                       r"\s+)?(?:word|letter|text)\s+)[\"“']?(?P<v>[\w][\w'’@&.-]*)", re.I)
_IN_FIELD = re.compile(r"\bwith\s+(?:the\s+(?:words?|text)\s+)?[\"“']?(?P<v>[\w][\w'’&.-]*"
                       r"(?:\s+[\w][\w'’&.-]*){0,4}?)[\"”']?\s+in\s+(?:the|its|their)\s+"
                       r"(?P<f>[a-z]+)\b", re.I)
_COUNT_OPS = {"more than": ">", "over": ">", "greater than": ">", "at least": ">=",
              "less than": "<", "fewer than": "<", "under": "<", "at most": "<=",
              "no more than": "<=", "exactly": "="}
_COUNT_CMP = re.compile(r"\b(?:with|having|has|have)\s+(?:(?P<cmp>" + "|".join(
    sorted(_COUNT_OPS, key=len, reverse=True)) + r")\s+)?(?P<n>\d{1,6})\s+"
    r"(?P<more>or\s+(?:more|fewer|less)\s+)?(?P<rest>[^,.;?!]{1,60})", re.I)
_STOCK = re.compile(r"\b(?:(?P<out>out\s+of|not\s+in)|in)\s+stock\b", re.I)
_STOCK_FIELD = re.compile(r"stock|inventory|available", re.I)
_NEGATION = re.compile(r"\b(?:not|except|excluding|other than|without|but not|no)\s+"
                       r"(?:in\s+|from\s+|the\s+|by\s+|of\s+|a\s+)*$", re.I)
_SORT = re.compile(r"\b(?:sort(?:ed)?|order(?:ed)?)\s+by\s+(?P<f>[\w ]{1,40}?)"
                   r"(?:\s+(?P<dir>asc|ascending|desc|descending))?(?:$|[,.;]|\s+(?:and|with|in|for)\b)",
                   re.I)

_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}
_QUERY_UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
}
_FIELD_UNIT_ALIASES = {"ms": "ms", "millisecond": "ms", "milliseconds": "ms", "s": "s",
                       "sec": "s", "second": "s", "seconds": "s", "min": "min",
                       "minute": "min", "minutes": "min", "h": "h", "hour": "h",
                       "hours": "h"}
_CURRENCY_UNITS = frozenset({"currency", "usd", "eur", "gbp", "cny", "jpy", "$", "€", "£",
                             "dollar", "dollars", "euro", "euros"})
_MONEY_NAME = re.compile(r"(price|cost|total|amount|fee|revenue|salary)", re.I)
_SIZE_NAME = re.compile(r"(bytes|size)", re.I)
_MULT = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6}

# superlatives: word → (dimension, direction)
_SUPERLATIVES: tuple[tuple[str, str, str], ...] = (
    (r"most expensive|priciest|costliest|highest[- ]priced|dearest", "money", "desc"),
    (r"least expensive|cheapest|lowest[- ]priced|most affordable", "money", "asc"),
    (r"longest", "duration", "desc"),
    (r"shortest", "duration", "asc"),
    (r"latest|newest|most recent|recent|last", "date", "desc"),
    (r"oldest|earliest", "date", "asc"),
    (r"largest|biggest", "size", "desc"),
    (r"smallest", "size", "asc"),
    (r"cheap|inexpensive|affordable|budget", "money", "asc"),
    (r"expensive|pricey|premium", "money", "desc"),
)
_SUPERLATIVE = re.compile(r"\b(?P<s>" + "|".join(f"(?:{w})" for w, _, _ in _SUPERLATIVES)
                          + r")\b", re.I)
_FIELD_SUPERLATIVE = re.compile(r"\b(?P<dir>highest|lowest|most|fewest|least|largest|"
                                r"smallest|biggest|greatest|max(?:imum)?|min(?:imum)?)\s+",
                                re.I)
_ALPHA = re.compile(r"\b(?:alphabetical(?:ly)?|a-z|a to z|z-a|z to a)\b", re.I)


@dataclass(slots=True)
class _Cond:
    path: str
    op: str
    value: Any
    span: tuple[int, int]
    score: float
    note: str
    confidence: float = EXACT_CONFIDENCE


@dataclass(slots=True)
class _Candidate:
    path: str  # "Field", "relation.Field" or "relation.relation2.Field"
    schema: ModelSchema
    field: FieldSchema
    relation: RelationSchema | None
    second: RelationSchema | None = None


@dataclass(slots=True)
class _Plan:
    target: ModelSchema
    wheres: list[dict[str, Any]] = field(default_factory=list)
    orders: list[dict[str, str]] = field(default_factory=list)
    limit: int | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    confidence: float = EXACT_CONFIDENCE
    evidence: float = 0.0
    value_conditions: int = 0
    candidates: list[_Candidate] = field(default_factory=list)
    field_spans: list[tuple[int, int]] = field(default_factory=list)
    named_fields: list[tuple[tuple[int, int], FieldSchema]] = field(default_factory=list)


@dataclass(slots=True)
class _ValueIndex:
    exact: dict[str, list[tuple[_Candidate, str]]] = field(default_factory=dict)
    odd: list[tuple[_Candidate, str, str]] = field(default_factory=list)
    max_words: int = 1
    choices: list[str] = field(default_factory=list)
    owners: list[tuple[_Candidate, str]] = field(default_factory=list)


_INDEX_CACHE: OrderedDict[tuple[Any, ...], tuple[list[ModelSchema], _ValueIndex]] = \
    OrderedDict()
_INDEX_CACHE_SIZE = 64


class BuiltinDSLGenerator:
    """Rule-based generator (see module doc). ``strict`` makes a query it cannot read an
    error instead of a text-match fallback."""

    name = "builtin"

    def __init__(self, *, strict: bool = False, fuzzy_cutoff: float = FUZZY_CUTOFF,
                 now: Callable[[], dt.datetime] | None = None) -> None:
        self.strict = strict
        self.fuzzy_cutoff = fuzzy_cutoff
        self.now = now or dt.datetime.now

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        truncated = len(query) > MAX_ANALYSED_CHARS
        if truncated:  # a question, not a document: its head says what is asked
            cut = query[:MAX_ANALYSED_CHARS]
            query = cut.rsplit(None, 1)[0] if " " in cut.strip() else cut
        parser = _Parser(query, schemas, self.strict, self.fuzzy_cutoff, self.now())
        values = sum(len(f.values) for s in schemas for f in s.fields)
        if len(query) > INLINE_CHARS or values > INLINE_VALUES:  # keep the event loop free
            out = await anyio.to_thread.run_sync(parser.parse)
        else:
            out = parser.parse()
        if truncated:
            out["warnings"] = [*out.get("warnings", []),
                               f"only the first {MAX_ANALYSED_CHARS} characters of the query "
                               "were analysed"]
        return out


class _Parser:
    def __init__(self, query: str, schemas: Sequence[ModelSchema], strict: bool,
                 fuzzy_cutoff: float, now: dt.datetime) -> None:
        self.query = query
        self.now = now
        self.low = query.lower()
        self.schemas = list(schemas)
        self.by_id = {s.id.lower(): s for s in schemas}
        self.strict = strict
        self.fuzzy_cutoff = fuzzy_cutoff
        self.used: list[tuple[int, int]] = []
        self.warnings: list[str] = []
        self.target_id = ""

    # -- entry -------------------------------------------------------------------

    def parse(self) -> dict[str, Any]:
        queryable = [s for s in self.schemas if s.queryable]
        if not queryable:
            raise DSLGenerationError("no model to query")
        mentions = self._model_mentions()
        named = [(spans[0][0], s) for s in queryable if (spans := mentions.get(s.id))]
        if named:  # the model named first is the one asked about
            plan, leftover = self._plan(min(named, key=lambda p: p[0])[1], mentions)
        else:  # none named: the model the query says most about (ties: the first listed)
            best: tuple[float, _Plan, list[str], list[tuple[int, int]]] | None = None
            for schema in queryable:
                plan, leftover = self._plan(schema, mentions)
                if best is None or plan.evidence > best[0]:
                    best = (plan.evidence, plan, leftover, list(self.used))
            assert best is not None
            evidence, plan, leftover, self.used = best
            if evidence == 0 and len(queryable) > 1:
                return self._fallback(queryable, mentions)
            self.target_id = plan.target.id
        return self._finish(plan, leftover, mentions)

    def _plan(self, target: ModelSchema,
              mentions: dict[str, list[tuple[int, int]]]) -> tuple[_Plan, list[str]]:
        """Every condition, order and limit the query states about ``target``."""
        self.target_id = target.id
        self.used = [s for spans in mentions.values() for s in spans]  # names aren't values
        plan = _Plan(target=target)
        candidates = self._candidates(target)
        plan.candidates = candidates
        field_mentions = self._field_mentions(candidates)
        plan.field_spans = [span for span, c, _ in field_mentions if c.relation is None]
        plan.named_fields = [(span, c.field) for span, c, strong in field_mentions
                             if c.relation is None and strong]
        self._relative_dates(plan, candidates, field_mentions)
        self._sorting(plan, candidates, field_mentions)
        self._counts(plan, target)
        self._stock(plan, candidates)
        self._between(plan, candidates, field_mentions)
        self._comparisons(plan, candidates, field_mentions)
        self._dates(plan, candidates, field_mentions)
        self._quoted_and_named(plan, candidates, field_mentions)
        self._values(plan, candidates, field_mentions, mentions)
        self._top_n(plan, mentions.get(target.id, []))
        return plan, self._leftover_words(field_mentions, mentions)

    def _finish(self, plan: _Plan, leftover: list[str],
                mentions: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
        target = plan.target
        if not plan.wheres and not plan.orders and not mentions.get(target.id):
            return self._fallback([target], mentions)
        if _COUNT.search(self.low):
            plan.notes.append("a count is asked for: Result.total is the number of matches")
        aggregate = _AGGREGATE.search(self.low)
        if aggregate:
            plan.warnings.append(f"{aggregate.group(0).lower()!r} is not computed (no "
                                 "aggregates); the matching records are returned")
        constrained = " ".join(str(w) for w in plan.wheres) + " ".join(
            o["field"] for o in plan.orders)
        for span, named in plan.named_fields:
            if named.kind in NUMERIC_KINDS | TEMPORAL_KINDS | {"boolean"} and \
                    self._free(span) and f"'{named.name}'" not in constrained and \
                    named.name not in constrained and not named.primary:
                word = self.query[span[0]:span[1]]
                message = f"{word!r} names the field {named.name} but no condition on it " \
                          "was understood"
                if message not in plan.warnings:
                    plan.warnings.append(message)
        terms: list[str] = []
        relax = False
        if leftover and not plan.value_conditions:
            # nouns not explained by a value ("wireless headphones under $100"): text match
            terms = self._text_match(plan, target, leftover)
            # only a word modifying the model's name ("music genres") may be dropped when
            # no row has it; any other unmatched word never widens the search
            relax = bool(terms) and self._modifies_a_name(
                leftover, [*mentions.get(target.id, []), *plan.field_spans])
            if terms and not relax:
                plan.warnings.append("not understood as a condition, matched as text: "
                                     + ", ".join(repr(w) for w in leftover))
        elif leftover:
            plan.notes.append("ignored: " + ", ".join(leftover))
            plan.warnings.append("not understood, ignored: "
                                 + ", ".join(repr(w) for w in leftover))
            plan.confidence *= _understood_factor(len(leftover), self._content_words())
        if leftover and not terms and not plan.value_conditions:
            plan.warnings.append("not understood, ignored: "
                                 + ", ".join(repr(w) for w in leftover))
            plan.confidence *= _understood_factor(len(leftover), self._content_words())
        return {"model": target.id, "wheres": plan.wheres, "orders": plan.orders,
                **({"limit": plan.limit} if plan.limit else {}),
                **({"terms": terms} if terms else {}),
                **({"relax": True} if relax else {}),
                "explanation": f"{target.id}: " + ("; ".join(plan.notes) or "all records"),
                "warnings": plan.warnings, "confidence": round(plan.confidence, 4)}

    def _content_words(self) -> int:
        """Words of the query that could carry meaning (not stopwords, not numbers)."""
        return sum(1 for m in _WORD.finditer(self.low)
                   if len(w := m.group(0).strip(".'’-")) >= 2 and w not in STOPWORDS)

    def _modifies_a_name(self, leftover: list[str], names: list[tuple[int, int]]) -> bool:
        """Every leftover word stands right next to the name of the model or of one of its
        fields ("music genres", "phone numbers"): read together they may just be that
        name, so a text match on them may be dropped when no row has them."""
        for word in leftover:
            pattern = re.compile(r"(?<!\w)" + re.escape(word.lower()) + r"(?!\w)")
            spans = [m.span() for m in pattern.finditer(self.low)]
            if not spans or not all(any(_adjacent(w, n, self.low) for n in names)
                                    for w in spans):
                return False
        return True

    # -- models ------------------------------------------------------------------

    def _model_phrases(self, schema: ModelSchema) -> set[str]:
        names = {words_of(schema.id), words_of(schema.table)}
        if schema.label:
            names.add(schema.label.lower())
        out: set[str] = set()
        for n in names:
            if n:
                out |= _plural_forms(n)
                out.add(n.replace(" ", ""))
        return out

    def _model_mentions(self) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = {}
        for schema in self.schemas:
            spans: list[tuple[int, int]] = []
            for phrase in self._model_phrases(schema):
                spans.extend(_find_phrase(self.low, phrase))
            if spans:
                found[schema.id] = sorted(set(spans))
        # a longer name wins over a shorter one inside it ("invoice line" over "invoice")
        for sid, spans in list(found.items()):
            keep = [s for s in spans if not any(
                o != sid and any(_overlaps(s, t) and (t[1] - t[0]) > (s[1] - s[0]) for t in ts)
                for o, ts in found.items())]
            if keep:
                found[sid] = keep
            else:
                del found[sid]
        return found

    def _candidates(self, target: ModelSchema) -> list[_Candidate]:
        out = [_Candidate(f.name, target, f, None) for f in target.fields]
        for rel in target.relations:
            other = self.by_id.get(rel.model.lower())
            if other is None:
                continue
            out.extend(_Candidate(f"{rel.name}.{f.name}", other, f, rel) for f in other.fields)
        # two hops (track → album → artist), hasOne only, for known values only
        for rel in target.relations:
            other = self.by_id.get(rel.model.lower())
            if rel.type != "hasOne" or other is None:
                continue
            for rel2 in other.relations:
                third = self.by_id.get(rel2.model.lower())
                if rel2.type != "hasOne" or third is None or third.id == target.id:
                    continue
                out.extend(_Candidate(f"{rel.name}.{rel2.name}.{f.name}", third, f, rel, rel2)
                           for f in third.fields if f.values)
        return out

    # -- fields ------------------------------------------------------------------

    def _field_mentions(self, candidates: list[_Candidate]) -> list[tuple[tuple[int, int],
                                                                          _Candidate, bool]]:
        """(span, candidate, strong) for each field named in the query; ``strong`` when the
        full name matched, weak for its last word alone ("price" for UnitPrice)."""
        out = []
        for cand in candidates:
            if cand.second is not None:
                continue  # fields two hops away are reached through their values only
            if cand.relation is not None and cand.relation.type == "hasOne" and \
                    cand.field.name == cand.relation.key:
                continue
            full = words_of(cand.field.name)
            phrases = {(p, True) for p in _plural_forms(full)}
            if cand.field.label:
                phrases |= {(p, True) for p in _plural_forms(cand.field.label.lower())}
            if " " in full:
                phrases |= {(p, False) for p in _plural_forms(full.rsplit(" ", 1)[1])
                            if p not in STOPWORDS and p != "id"}
            for phrase, strong in phrases:
                for span in _find_phrase(self.low, phrase):
                    out.append((span, cand, strong))
        return out

    def _near_field(self, pos: int, mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                    accept: Any, *, window: int = 40) -> _Candidate | None:
        """The accepted field mentioned closest before ``pos`` (or just after it)."""
        best: tuple[float, _Candidate] | None = None
        for span, cand, strong in mentions:
            if not accept(cand):
                continue
            dist: float
            if span[1] <= pos:
                dist = pos - span[1]
            elif span[0] >= pos:
                dist = (span[0] - pos) * 1.5 + 5
            else:
                dist = 0
            if dist > window:
                continue
            rank = dist + (0 if strong else 8) + (0 if cand.relation is None else 4)
            if best is None or rank < best[0]:
                best = (rank, cand)
        return best[1] if best else None

    def _is_plain(self, cand: _Candidate) -> bool:
        """Not a key: keys are not compared with amounts or matched to words."""
        if cand.field.primary:
            return False
        foreigns = {r.foreign.lower() for r in cand.schema.relations if r.type == "hasOne"}
        return cand.field.name.lower() not in foreigns

    def _dimension(self, cand: _Candidate) -> str | None:
        f = cand.field
        unit = (f.unit or "").lower()
        if f.kind in TEMPORAL_KINDS:
            return "date"
        if f.kind not in NUMERIC_KINDS:
            return None
        if unit in _FIELD_UNIT_ALIASES:
            return "duration"
        if unit in _CURRENCY_UNITS or _MONEY_NAME.search(f.name):
            return "money"
        if unit == "bytes" or _SIZE_NAME.search(f.name):
            return "size"
        return "number"

    def _field_for(self, candidates: list[_Candidate], dimension: str,
                   mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                   pos: int) -> _Candidate | None:
        """A field of ``dimension`` (money/duration/size/date/number): the mentioned one
        nearest to ``pos``, else the target's first such field, else a related one."""
        def ok(c: _Candidate) -> bool:
            d = self._dimension(c)
            if d is None or not self._is_plain(c):
                return False
            return d == dimension or (dimension == "number" and d in (
                "money", "duration", "size", "number"))
        near = self._near_field(pos, mentions, ok)
        if near is not None:
            return near
        own = [c for c in candidates if c.relation is None and ok(c)]
        if dimension == "number":
            return own[0] if len(own) == 1 else None
        if own:
            return own[0]
        related = [c for c in candidates if c.relation is not None and
                   c.relation.type == "hasOne" and ok(c)]
        return related[0] if len(related) == 1 else None

    # -- conditions --------------------------------------------------------------

    def _free(self, span: tuple[int, int]) -> bool:
        return not any(_overlaps(span, u) for u in self.used)

    def _full(self, plan: _Plan) -> bool:
        if len(plan.wheres) < MAX_CONDITIONS:
            return False
        message = f"more than {MAX_CONDITIONS} conditions; the rest were ignored"
        if message not in plan.warnings:
            plan.warnings.append(message)
        return True

    def _add(self, plan: _Plan, path: str, op: str, value: Any, span: tuple[int, int],
             note: str) -> None:
        if self._full(plan):
            self.used.append(span)
            return
        plan.wheres.append({"field": path, "op": op, "value": value})
        plan.notes.append(note)
        plan.evidence += 1.0
        self.used.append(span)

    def _number(self, m: re.Match[str], prefix: str = "") -> tuple[float, str | None,
                                                                     bool]:
        raw = m.group(prefix + "num").replace(",", ".") if "." not in m.group(
            prefix + "num") else m.group(prefix + "num").replace(",", "")
        value = float(raw)
        mult = m.group(prefix + "mult")
        if mult:
            value *= _MULT[mult.lower()]
        unit = (m.group(prefix + "unit") or "").lower() or None
        money = bool(m.group(prefix + "cur")) or unit in _CURRENCY_UNITS or unit in (
            "dollar", "dollars", "euro", "euros", "pound", "pounds")
        return value, unit, money

    def _convert(self, value: float, unit: str | None, cand: _Candidate) -> float:
        q = _QUERY_UNITS.get(unit or "")
        f = _FIELD_UNIT_ALIASES.get((cand.field.unit or "").lower())
        if q and f:
            value = value * _UNIT_SECONDS[q] / _UNIT_SECONDS[f]
        return value

    def _typed(self, value: float, cand: _Candidate) -> int | float:
        if cand.field.kind == "integer" or value.is_integer():
            return round(value) if cand.field.kind == "integer" else int(value)
        return value

    def _numeric_dimension(self, cmp_word: str, unit: str | None, money: bool) -> str:
        w = cmp_word.lower()
        if money or w.startswith(("cheaper", "pricier", "costlier", "costing", "priced")):
            return "money"
        if unit in _QUERY_UNITS or w.startswith(("longer", "shorter")):
            return "duration"
        if unit in ("bytes", "kb", "mb", "gb"):
            return "size"
        return "number"

    def _comparisons(self, plan: _Plan, candidates: list[_Candidate],
                     mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        matches: list[tuple[re.Match[str], str]] = []
        for m in _CMP.finditer(self.low):
            word = m.group("cmp").lower()
            op = next(o for w, o in _CMP_WORDS if re.fullmatch(w, word))
            if op == "between":
                continue
            matches.append((m, op))
        for m in _OR_MORE.finditer(self.low):
            op = ">=" if m.group("dir").lower() in ("more", "higher", "above") else "<="
            matches.append((m, op))
        for m, op in matches:
            span = m.span()
            if not self._free(span):
                continue
            value, unit, money = self._number(m)
            word = m.groupdict().get("cmp") or ""
            dim = self._numeric_dimension(word, unit, money)
            cand = self._field_for(candidates, dim, mentions, span[0])
            if cand is None and dim != "number":
                cand = self._field_for(candidates, "number", mentions, span[0])
            if cand is None:
                plan.warnings.append(f"could not tell which field {m.group(0).strip()!r} is "
                                     "about; ignored")
                self.used.append(span)
                continue
            if cand.field.kind in TEMPORAL_KINDS:
                continue  # years are handled by _dates
            v = self._typed(self._convert(value, unit, cand), cand)
            self._add(plan, cand.path, op, v, span,
                      f"{cand.path} {op} {v} (\"{m.group(0).strip()}\")")

    def _stock(self, plan: _Plan, candidates: list[_Candidate]) -> None:
        """"in stock" → ``stock > 0``, "out of stock" → ``stock <= 0`` on the target's
        numeric stock/inventory field; said with no such field it is a warning."""
        for m in _STOCK.finditer(self.low):
            if not self._free(m.span()):
                continue
            cand = next((c for c in candidates if c.relation is None
                         and c.field.kind in NUMERIC_KINDS and self._is_plain(c)
                         and _STOCK_FIELD.search(" ".join(
                             filter(None, (c.field.name, c.field.label,
                                           c.field.description))))), None)
            if cand is None:
                plan.warnings.append(f"{m.group(0).strip()!r}: no stock field to check; "
                                     "ignored")
                self.used.append(m.span())
                continue
            op = "<=" if m.group("out") else ">"
            self._add(plan, cand.path, op, 0, m.span(),
                      f"{cand.path} {op} 0 (\"{m.group(0).strip()}\")")

    def _counts(self, plan: _Plan, target: ModelSchema) -> None:
        """"artists with more than 5 albums" → ``count(albums) > 5`` over a hasMany
        relation of the target (named by the relation or by its model)."""
        relations = [r for r in target.relations if r.type == "hasMany"]
        if not relations:
            return
        for m in _COUNT_CMP.finditer(self.low):
            rest = m.group("rest")
            for rel in relations:
                phrases = _plural_forms(words_of(rel.name))
                other = self.by_id.get(rel.model.lower())
                if other is not None:
                    phrases |= self._model_phrases(other)
                phrase = next((p for p in sorted(phrases, key=len, reverse=True)
                               if re.match(re.escape(p) + r"(?!\w)", rest)), None)
                if phrase is None:
                    continue
                span = (m.start(), m.start("rest") + len(phrase))
                if not self._free((m.start(), m.start("rest"))):  # the model name is "used"
                    break
                cmp_word = (m.group("cmp") or "").lower()
                op = _COUNT_OPS.get(cmp_word, "=")
                if m.group("more"):
                    op = ">=" if m.group("more").lower().startswith("or more") else "<="
                n = int(m.group("n"))
                path = f"count({rel.name})"
                self._add(plan, path, op, n, span, f"{path} {op} {n} (\"{m.group(0).strip()}\")")
                plan.value_conditions += 1
                break

    def _between(self, plan: _Plan, candidates: list[_Candidate],
                 mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        for m in _BETWEEN.finditer(self.low):
            a, ua, ma = self._number(m, "a_")
            b, ub, mb = self._number(m, "b_")
            unit = ua or ub
            if not (unit or ma or mb) and _is_year(a) and _is_year(b) and \
                    self._field_for(candidates, "date", mentions, m.start()) is not None:
                continue  # "between 2010 and 2012": years, read by _dates
            dim = self._numeric_dimension("", unit, ma or mb)
            cand = self._field_for(candidates, dim, mentions, m.start())
            if cand is None or cand.field.kind in TEMPORAL_KINDS:
                continue
            low, high = sorted((self._convert(a, ua or ub, cand), self._convert(b, ub or ua,
                                                                                cand)))
            value = [self._typed(low, cand), self._typed(high, cand)]
            self._add(plan, cand.path, "between", value, m.span(),
                      f"{cand.path} between {value[0]} and {value[1]}")

    def _relative_dates(self, plan: _Plan, candidates: list[_Candidate],
                        mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        """"last 30 days", "past week" (rolling, up to now); "this month" (the current
        period); "last year" (the previous calendar period); "today", "yesterday"."""
        found: list[tuple[tuple[int, int], dt.datetime, dt.datetime | None, str]] = []
        for m in _REL_N.finditer(self.low):
            try:
                start = _shift(self.now, -int(m.group("n")), m.group("u").rstrip("s"))
            except (ValueError, OverflowError):
                plan.warnings.append(f"{m.group(0).strip()!r} reaches beyond the year 1; "
                                     "ignored")
                self.used.append(m.span())
                continue
            found.append((m.span(), start, None, m.group(0).strip()))
        for m in _REL_ONE.finditer(self.low):
            if any(_overlaps(m.span(), f[0]) for f in found):
                continue
            unit = (m.group("u") or "day").lower()
            which = (m.group("which") or m.group("word")).lower()
            this_start = _period_start(self.now, unit)
            if which == "today":
                start, end = this_start, None
            elif which == "yesterday":
                start, end = _shift(this_start, -1, "day"), this_start
            elif which == "this":
                start, end = this_start, None
            elif which == "past":
                start, end = _shift(self.now, -1, unit), None
            else:  # last / previous: the whole previous period
                start, end = _shift(this_start, -1, unit), this_start
            found.append((m.span(), start, end, m.group(0).strip()))
        for span, start, end, text in found:
            if not self._free(span):
                continue
            cand = self._field_for(candidates, "date", mentions, span[0])
            if cand is None:
                continue
            if end is None:
                self._add(plan, cand.path, ">=", start.isoformat(), span,
                          f"{cand.path} >= {start.isoformat()} (\"{text}\")")
                continue
            plan.wheres.append({"and": [
                {"field": cand.path, "op": ">=", "value": start.isoformat()},
                {"field": cand.path, "op": "<", "value": end.isoformat()}]})
            plan.notes.append(f"{cand.path} in [{start.isoformat()}, {end.isoformat()}) "
                              f"(\"{text}\")")
            plan.evidence += 1.0
            self.used.append(span)

    def _date_mentions(self) -> list[tuple[tuple[int, int], str, str, str, str]]:
        """(span, word, start, end, text) of each date the query states: ranges ("from
        2010 to 2012", "between March 2024 and May 2024"), month names ("in March 2025",
        "during May": the latest May up to now), then ISO dates and years. ``start``/``end``
        bound the period (ISO); a date that does not exist is a warning."""
        found: list[tuple[tuple[int, int], str, str, str, str]] = []
        taken: list[tuple[int, int]] = []

        def add(span: tuple[int, int], word: str, a: str, b: str, text: str) -> None:
            if any(_overlaps(span, t) for t in taken):
                return
            taken.append(span)
            try:
                start, _ = _date_bounds(a)
                _, end = _date_bounds(b)
            except (ValueError, OverflowError):
                self.warnings.append(f"{text!r} is not a valid date; ignored")
                self.used.append(span)
                return
            found.append((span, word, start, end, text))

        for m in _DATE_RANGE.finditer(self.low):
            a, b = self._month_text(m, "a_"), self._month_text(m, "b_")
            if a and b:
                add(m.span(), "range", a, b, m.group(0).strip())
        for m in _MONTH_DATE.finditer(self.low):
            word = (m.group("cmp") or "in").lower()
            if m.group("year") is None and m.group("cmp") is None:
                continue  # "may", "march" alone are words, not dates
            text = self._month_text(m, "")
            if text:
                add(m.span(), word, text, text, m.group(0).strip())
        for m in _DATE_CMP.finditer(self.low):
            date = m.group("date")
            add(m.span(), m.group("cmp").lower(), date, date, m.group(0).strip())
        return sorted(found, key=lambda f: f[0])

    def _month_text(self, m: re.Match[str], prefix: str) -> str | None:
        """``YYYY-MM`` (or the ISO date/year) a range end or month-name match stands for."""
        groups = m.groupdict()
        if groups.get(prefix + "iso"):
            return str(groups[prefix + "iso"])
        month_name = groups.get(prefix + "mon")
        if not month_name:
            return None
        month = _MONTHS[month_name.lower().rstrip(".")[:3]]
        year_text = groups.get(prefix + "year")
        if year_text:
            year = int(year_text)
        else:  # "in May": the latest May up to now
            year = self.now.year if month <= self.now.month else self.now.year - 1
        return f"{year:04d}-{month:02d}"

    def _dates(self, plan: _Plan, candidates: list[_Candidate],
               mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        self.warnings = plan.warnings
        for span, word, start, end, text in self._date_mentions():
            if not self._free(span):
                continue
            cand = self._field_for(candidates, "date", mentions, span[0])
            if cand is None:
                continue
            value: str
            if word == "after":
                op, value = (">=", end)
            elif word == "since" or (word == "from" and len(text.split()[-1]) >= 10):
                op, value = (">=", start)  # "from 2024-03-01": that day onwards
            elif word == "before":
                op, value = ("<", start)
            elif word in ("until", "till", "by"):
                op, value = ("<", end)
            else:  # "in/during/from 2024", "March 2025", a range: start <= x < end
                plan.wheres.append({"and": [{"field": cand.path, "op": ">=", "value": start},
                                            {"field": cand.path, "op": "<", "value": end}]})
                plan.notes.append(f"{cand.path} in [{start}, {end}) (\"{text}\")")
                plan.evidence += 1.0
                self.used.append(span)
                continue
            self._add(plan, cand.path, op, value, span, f"{cand.path} {op} {value} (\"{text}\")")

    def _quoted_and_named(self, plan: _Plan, candidates: list[_Candidate],
                          mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        texts: list[tuple[str, tuple[int, int], str]] = []
        for m in _QUOTED.finditer(self.query):
            value = next(g for g in m.groups() if g is not None)
            texts.append((value, m.span(), "quoted"))
        named_fields = [span for span, _, _ in mentions]
        for m in _CONTAINS.finditer(self.low):
            word = m.group("v")
            marked = re.search(r"\b(?:word|letter|text)\s+\S*$", m.group(0)) is not None
            if (word in STOPWORDS and not marked) or any(
                    _overlaps(m.span("v"), f) for f in named_fields):
                continue  # "containing gmail.com" yes; "with email ..." is a field, not text
            texts.append((self.query[m.start("v"):m.end("v")], m.span(), "contains"))
        for m in _NAMED.finditer(self.low):
            texts.append((self.query[m.start("v"):m.end("v")], m.span(), "named"))
        in_field: dict[tuple[int, int], _Candidate] = {}
        for m in _IN_FIELD.finditer(self.low):  # "with greatest hits in the title"
            target_field = self._text_field_named(m.group("f"), candidates, plan.target)
            if target_field is not None:
                in_field[m.span()] = target_field
                texts.append((self.query[m.start("v"):m.end("v")], m.span(), "in-field"))
        for value, span, how in sorted(texts, key=lambda t: t[2] != "in-field"):
            if not self._free(span) or not value.strip():
                continue
            # a quoted known value is an equality (_values); "called X", "with X in the
            # title" and "containing X" are contains matches
            if how == "quoted" and self._exact_value(value, candidates) is not None:
                continue
            if how == "named":  # "employees named Jane": a known first name is an equality
                known = self._exact_value_field(value, candidates)
                if known is not None and known.field.name != plan.target.title_field:
                    continue
            cand = in_field.get(span) or self._near_field(
                span[0], mentions, lambda c: c.field.kind in TEXT_KINDS and self._is_plain(c))
            if cand is None and how == "named":  # a person: first or last name
                people = [c for c in candidates if c.relation is None and
                          c.field.name.lower().replace("_", "") in ("firstname", "lastname")]
                if people:
                    ors = [{"field": c.path, "op": "like",
                            "value": "%" + _escape_like(value.strip()) + "%"} for c in people]
                    if not self._full(plan):
                        plan.wheres.append({"or": ors})
                        plan.notes.append(f"name contains {value.strip()!r}")
                        plan.evidence += 1.0
                        plan.value_conditions += 1
                    self.used.append(span)
                    continue
            if cand is None:
                title = plan.target.title_field
                if title is None:
                    continue
                cand = next(c for c in candidates if c.relation is None and c.field.name == title)
            pattern = "%" + _escape_like(value.strip()) + "%"
            self._add(plan, cand.path, "like", pattern, span,
                      f"{cand.path} contains {value.strip()!r}")
            plan.value_conditions += 1

    def _text_field_named(self, phrase: str, candidates: list[_Candidate],
                          target: ModelSchema) -> _Candidate | None:
        """The target's text field called ``phrase`` ("title", "name", a label); "title"
        and "name" also mean the model's title field."""
        phrase = phrase.strip().lower()
        own = [c for c in candidates if c.relation is None and c.field.kind in TEXT_KINDS]
        for c in own:
            names = _plural_forms(words_of(c.field.name))
            if c.field.label:
                names |= _plural_forms(c.field.label.lower())
            if phrase in names:
                return c
        if phrase.rstrip("s") in ("title", "name") and target.title_field:
            return next((c for c in own if c.field.name == target.title_field), None)
        return None

    def _exact_value_field(self, text: str,
                           candidates: list[_Candidate]) -> _Candidate | None:
        """The own field (else any) holding ``text`` as a known value."""
        low = text.strip().lower()
        hits = [c for c in candidates if any(v.lower() == low for v in c.field.values)]
        return next((c for c in hits if c.relation is None), hits[0] if hits else None)

    def _exact_value(self, text: str, candidates: list[_Candidate]) -> str | None:
        low = text.strip().lower()
        for c in candidates:
            for v in c.field.values:
                if v.lower() == low:
                    return v
        return None

    def _values(self, plan: _Plan, candidates: list[_Candidate],
                mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                model_mentions: dict[str, list[tuple[int, int]]]) -> None:
        """Equality on categorical values, exact then fuzzy, own fields and one hop."""
        index = self._value_index(candidates)
        hits: list[tuple[tuple[int, int], _Candidate, str]] = []
        words = [m.span() for m in _WORD.finditer(self.low)]
        variant_hits: list[tuple[tuple[int, int], _Candidate, str]] = []
        for i in range(len(words)):
            for n in range(1, min(index.max_words, len(words) - i) + 1):
                span = (words[i][0], words[i + n - 1][1])
                text = self.low[span[0]:span[1]]
                exact = index.exact.get(text, ())
                for cand, value in exact:
                    hits.append((span, cand, value))
                if not exact and len(text) >= 4:  # "computer" for "computers"
                    for form in _plural_forms(text) - {text}:
                        for cand, value in index.exact.get(form, ()):
                            variant_hits.append((span, cand, value))
        for cand, value, vlow in index.odd:
            hits.extend((span, cand, value) for span in _find_phrase(self.low, vlow))
        found: list[_Cond] = []
        for hit_list, base in ((hits, EXACT_CONFIDENCE), (variant_hits, VARIANT_CONFIDENCE)):
            for span, cand, value in hit_list:
                if len(value) <= 3 and self.query[span[0]:span[1]] != value:
                    continue  # short values ("NY", "USA") must match case and all
                found.append(_Cond(cand.path, "=", value, span,
                                   self._preference(cand, span, base, mentions,
                                                    model_mentions),
                                   f"{cand.path} = {value!r}", base))
        found.extend(self._fuzzy_values(index, found, mentions, model_mentions))
        chosen: list[_Cond] = []
        for cond in sorted(found, key=lambda c: (-(c.span[1] - c.span[0]), -c.score)):
            if self._free(cond.span) and not any(_overlaps(cond.span, c.span) for c in chosen):
                chosen.append(cond)
        by_path: dict[tuple[str, bool], list[_Cond]] = {}
        for cond in sorted(chosen, key=lambda c: c.span[0]):
            negated = bool(_NEGATION.search(self.low[max(0, cond.span[0] - 25):cond.span[0]]))
            readings = self._other_readings(cond, found)
            if readings and not negated:  # "Iron Maiden albums": a title or an artist
                self._either(plan, [cond, *readings])
                continue
            by_path.setdefault((cond.path, negated), []).append(cond)
        for (path, negated), conds in by_path.items():
            if self._full(plan):
                break
            values = list(dict.fromkeys(c.value for c in conds))
            where_value: Any
            if len(values) == 1:
                op, where_value = ("!=" if negated else "="), values[0]
            else:
                op, where_value = ("not in" if negated else "in"), values
            plan.wheres.append({"field": path, "op": op, "value": where_value})
            plan.notes.append(f"{path} {op} {where_value!r}" + "".join(
                f" (\"{self.query[c.span[0]:c.span[1]]}\" ≈ {c.value!r})" for c in conds
                if self.low[c.span[0]:c.span[1]] != c.value.lower()))
            plan.confidence = min(plan.confidence, *(c.confidence for c in conds))
            plan.value_conditions += 1
            plan.evidence += sum(c.confidence * (2.0 if "." not in path else 1.5)
                                 for c in conds)
            self.used.extend(c.span for c in conds)

    @staticmethod
    def _other_readings(cond: _Cond, found: list[_Cond]) -> list[_Cond]:
        """Equally exact matches of the same words in other fields, nearly as likely
        (within :data:`TIE_MARGIN`): the query does not say which one is meant."""
        return [c for c in found if c.span == cond.span and c.path != cond.path
                and c.confidence == cond.confidence == EXACT_CONFIDENCE
                and c.score >= cond.score - TIE_MARGIN]

    def _either(self, plan: _Plan, conds: list[_Cond]) -> None:
        """One condition read several ways: their ``or``, with a note saying so."""
        if self._full(plan):
            return
        plan.wheres.append({"or": [{"field": c.path, "op": "=", "value": c.value}
                                   for c in conds]})
        plan.notes.append(" or ".join(f"{c.path} = {c.value!r}" for c in conds)
                          + f" (\"{self.query[conds[0].span[0]:conds[0].span[1]]}\" "
                            "could be any of these)")
        plan.value_conditions += 1
        plan.evidence += 2.0
        plan.confidence = min(plan.confidence, AMBIGUOUS_CONFIDENCE)
        self.used.append(conds[0].span)

    def _preference(self, cand: _Candidate, span: tuple[int, int], base: float,
                    mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                    model_mentions: dict[str, list[tuple[int, int]]]) -> float:
        """How likely this field is the one meant for a value at ``span`` (≥ base)."""
        score = base
        near = self._near_field(span[0], mentions, lambda c: c.path == cand.path, window=30)
        if near is None:  # "Jazz genre": the field or its model named right after the value
            near = self._near_field(span[1], mentions, lambda c: c.path == cand.path,
                                    window=12)
        if near is not None:
            score += 0.5
        if cand.relation is not None and cand.schema.id == self.target_id:
            score -= 0.2  # a self-relation (Employee.reportsto) only when named
        elif cand.relation is not None:
            spans = model_mentions.get(cand.schema.id, [])
            rel_words = _find_phrase(self.low, words_of(cand.relation.name))
            if cand.second is not None:  # two hops: only when nothing closer holds it
                rel_words += _find_phrase(self.low, words_of(cand.second.name))
                score -= 0.15
            close = [s for s in [*spans, *rel_words]
                     if abs(s[0] - span[1]) < 30 or abs(span[0] - s[1]) < 30]
            if close:
                score += 0.4
            elif spans or rel_words:
                score += 0.2
            if cand.relation.type == "hasMany":
                score -= 0.1
        else:
            score += 0.15
        if len(cand.field.values) <= 50:
            score += 0.1
        return score

    def _value_index(self, candidates: list[_Candidate]) -> _ValueIndex:
        """Known values of the candidates by lower-cased text (cached per schema set:
        the catalog hands out the same schema objects on every search)."""
        key = (self.target_id, *(id(s) for s in self.schemas))
        cached = _INDEX_CACHE.get(key)
        if cached is not None and all(a is b for a, b in zip(cached[0], self.schemas,
                                                             strict=True)):
            _INDEX_CACHE.move_to_end(key)
            return cached[1]
        index = _ValueIndex()
        for cand in candidates:
            if not cand.field.values or not self._is_plain(cand):
                continue
            for value in cand.field.values:
                vlow = value.lower()
                if len(vlow) < 2 or vlow in STOPWORDS:
                    continue
                if vlow[0].isalnum() and vlow[-1].isalnum():
                    index.exact.setdefault(vlow, []).append((cand, value))
                    index.max_words = max(index.max_words, len(_WORD.findall(vlow)))
                else:
                    index.odd.append((cand, value, vlow))
                if len(value) >= 4:
                    index.choices.append(vlow)
                    index.owners.append((cand, value))
        index.max_words = min(index.max_words, 12)
        _INDEX_CACHE[key] = (list(self.schemas), index)
        while len(_INDEX_CACHE) > _INDEX_CACHE_SIZE:
            _INDEX_CACHE.popitem(last=False)
        return index

    def _fuzzy_values(self, index: _ValueIndex, exact: list[_Cond],
                      mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                      model_mentions: dict[str, list[tuple[int, int]]]) -> list[_Cond]:
        """Misspelt values: query n-grams (1–3 words, not yet matched) against values."""
        choices, owners = index.choices, index.owners
        if not choices:
            return []
        words = [(m.group(0), m.span()) for m in _WORD.finditer(self.low)]
        taken = [c.span for c in exact] + self.used
        out: list[_Cond] = []
        for n in (3, 2, 1):
            for i in range(len(words) - n + 1):
                span = (words[i][1][0], words[i + n - 1][1][1])
                text = self.low[span[0]:span[1]]
                if len(text) < MIN_FUZZY_CHARS or any(_overlaps(span, t) for t in taken):
                    continue
                if all(w in STOPWORDS or w.isdigit() for w, _ in words[i:i + n]):
                    continue
                if n == 1 and text in STOPWORDS:
                    continue
                for _choice, ratio, idx in process.extract(
                        text, choices, scorer=fuzz.ratio, score_cutoff=self.fuzzy_cutoff,
                        limit=3):
                    cand, value = owners[idx]
                    base = ratio / 100.0 * 0.9
                    out.append(_Cond(cand.path, "=", value, span,
                                     self._preference(cand, span, base, mentions,
                                                      model_mentions),
                                     f"{cand.path} = {value!r}", base))
                if out and any(c.span == span for c in out):
                    taken.append(span)
        return out

    # -- ordering ----------------------------------------------------------------

    def _sorting(self, plan: _Plan, candidates: list[_Candidate],
                 mentions: list[tuple[tuple[int, int], _Candidate, bool]]) -> None:
        own = [c for c in candidates if c.relation is None]
        for m in _SORT.finditer(self.low):
            phrase = m.group("f").strip()
            cand = next((c for c in own if phrase in _plural_forms(words_of(c.field.name))
                         or (c.field.label and phrase == c.field.label.lower())), None)
            if cand is None:
                continue
            direction = "desc" if (m.group("dir") or "").startswith("desc") else "asc"
            self._order(plan, cand.field.name, direction, m.span(), f"\"{m.group(0).strip()}\"")
        for m in _ALPHA.finditer(self.low):
            title = plan.target.title_field
            if title:
                direction = "desc" if m.group(0).lower() in ("z-a", "z to a") else "asc"
                self._order(plan, title, direction, m.span(), "alphabetical")
        for m in _FIELD_SUPERLATIVE.finditer(self.low):
            after = m.end()
            cand = next((c for span, c, _ in sorted(mentions, key=lambda x: x[0][0])
                         if c.relation is None and 0 <= span[0] - after <= 1
                         and c.field.kind in NUMERIC_KINDS | TEMPORAL_KINDS), None)
            if cand is None:
                continue
            word = m.group("dir").lower()
            direction = "asc" if word in ("lowest", "fewest", "least", "smallest",
                                          "min", "minimum") else "desc"
            self._order(plan, cand.field.name, direction, (m.start(), after), f"{word} "
                        f"{words_of(cand.field.name)}")
        named = [span for span, _, _ in mentions]
        for m in _SUPERLATIVE.finditer(self.low):
            if not self._free(m.span()) or any(_overlaps(m.span(), n) for n in named):
                continue  # "last name" is a field, not "latest"
            word = m.group("s").lower()
            dim, direction = next((d, o) for w, d, o in _SUPERLATIVES if re.fullmatch(w, word))
            cand = self._field_for(own, dim, [x for x in mentions if x[1].relation is None],
                                   m.end())
            if cand is None and dim == "size":
                cand = self._field_for(own, "money", mentions, m.end())
            if cand is None:
                if word not in ("last", "recent"):
                    plan.warnings.append(f"no field to order {word!r} by")
                continue
            self._order(plan, cand.field.name, direction, m.span(), f"\"{word}\"")

    def _order(self, plan: _Plan, field_name: str, direction: str, span: tuple[int, int],
               why: str) -> None:
        if any(o["field"] == field_name for o in plan.orders):
            return
        plan.orders.append({"field": field_name, "order": direction})
        plan.notes.append(f"order by {field_name} {direction} ({why})")
        plan.evidence += 1.0
        self.used.append(span)

    def _top_n(self, plan: _Plan, target_spans: list[tuple[int, int]]) -> None:
        for m in _TOP.finditer(self.low):
            if not self._free(m.span()):
                continue
            n = int(m.group("n"))
            if n >= 1:
                plan.limit = n
                plan.notes.append(f"limit {n}")
                self.used.append(m.span())
                return
        if plan.orders and target_spans and _SUPERLATIVE.search(self.low):
            first = self.low[target_spans[0][0]:target_spans[0][1]]
            if not first.endswith("s"):
                plan.limit = 1
                plan.notes.append("limit 1 (one asked for)")

    # -- fallback ----------------------------------------------------------------

    def _leftover_words(self, field_mentions: list[tuple[tuple[int, int], _Candidate, bool]],
                        model_mentions: dict[str, list[tuple[int, int]]]) -> list[str]:
        spans = list(self.used) + [s for s, _, _ in field_mentions]
        spans += [s for ss in model_mentions.values() for s in ss]
        out = []
        for m in _WORD.finditer(self.low):
            w = m.group(0).strip(".'’-")
            if len(w) < 2 or w in STOPWORDS or w.isdigit() or any(
                    _overlaps(m.span(), s) for s in spans):
                continue
            if _SUPERLATIVE.fullmatch(w) or w in ("cheaper", "expensive", "order",
                                                  "sorted", "sort", "alphabetical"):
                continue
            out.append(self.query[m.start():m.start() + len(w)])
        return list(dict.fromkeys(out))

    def _text_match(self, plan: _Plan, target: ModelSchema, words: list[str]) -> list[str]:
        """``like`` on the target's title and content fields (or, without them, the title
        of a related model: "orders of headphones" → ``product.name``) and its other text
        fields, any word; the words (singular stems) are returned as ranking terms."""
        fields = [f for f in (target.title_field, _content_field(target)) if f]
        if not fields:  # "orders of headphones": the title of what the row points at
            for rel in target.relations:
                other = self.by_id.get(rel.model.lower())
                if rel.type == "hasOne" and other is not None and other.title_field:
                    fields = [f"{rel.name}.{other.title_field}"]
                    break
        fields += [f for f in _free_text_fields(target) if f not in fields]
        fields = fields[:MAX_TEXT_FIELDS]
        terms = _terms(words)
        if not fields:
            plan.notes.append("ignored: " + ", ".join(words))
            return []
        ors = [{"field": f, "op": "like", "value": f"%{_escape_like(t)}%"}
               for f in fields for t in terms]
        plan.wheres.append(ors[0] if len(ors) == 1 else {"or": ors})
        plan.notes.append(f"text match on {', '.join(fields)}: " + ", ".join(terms))
        plan.confidence = min(plan.confidence, FALLBACK_CONFIDENCE)
        return terms

    def _fallback(self, models: list[ModelSchema],
                  mentions: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
        words = self._leftover_words([], mentions)
        if self.strict:
            raise DSLGenerationError(
                f"could not turn the query into a QueryDSL (query.strict is on): "
                f"no model, value or condition recognised in {self.query[:80]!r}")
        queries = []
        terms = _terms(words)[:6]
        for s in models:
            fields = [f.name for f in s.fields if f.kind in TEXT_KINDS and not f.primary
                      and not f.name.startswith("__yao_") and not f.values]
            if s.title_field:
                fields = [f for f in (s.title_field, _content_field(s)) if f]
            if not fields or not terms:
                continue
            ors = [{"field": f, "op": "like", "value": f"%{_escape_like(t)}%"}
                   for f in fields[:4] for t in terms]
            queries.append({"model": s.id, "terms": terms,
                            "wheres": [ors[0] if len(ors) == 1 else {"or": ors}]})
        if not queries:  # nothing to match: an empty answer, never the whole table
            shown = ", ".join(repr(w) for w in words) or repr(self.query[:80])
            return {"queries": [], "explanation": "nothing recognised; nothing searched",
                    "fallback": True, "confidence": NOTHING_CONFIDENCE,
                    "warnings": [f"the query was not understood ({shown}); no records "
                                 "are shown"]}
        return {"queries": queries, "fallback": True,
                "explanation": "text match: " + ", ".join(terms),
                "warnings": ["no condition recognised; fell back to a text match"],
                "confidence": FALLBACK_CONFIDENCE}


def _understood_factor(dropped: int, content: int) -> float:
    """``0.5 + 0.5 × understood``: the confidence left when ``dropped`` of ``content``
    content words were not understood."""
    if content <= 0:
        return 1.0
    return 0.5 + 0.5 * max(0.0, 1.0 - dropped / content)


def _free_text_fields(schema: ModelSchema) -> list[str]:
    """Other text fields a text match searches: free text first (no known values: names,
    composers, companies), then those with known values (on a permission-aware table
    these are the public rows' only); never keys nor permission columns."""
    keys = {r.foreign.lower() for r in schema.relations if r.type == "hasOne"}
    fields = [f for f in schema.fields
              if f.kind in TEXT_KINDS and not f.primary and f.name.lower() not in keys
              and not f.name.lower().startswith("__yao_")
              and f.name.lower() not in ("share", "deleted_at")]
    return [f.name for f in sorted(fields, key=lambda f: bool(f.values))]


def _content_field(schema: ModelSchema) -> str | None:
    names = {f.name.lower(): f.name for f in schema.fields if f.kind in TEXT_KINDS}
    return next((names[n] for n in ("description", "content", "summary", "body", "text")
                 if n in names), None)


