"""The parser: picks the model a question is about, runs the extractors in order, and
turns what they understood (and what they did not) into a QueryDSL dict.

Extractors run in the order of :data:`EXTRACTORS`; each uses up the words it understood
(``Plan.used``), so an earlier one wins over a later one on the same words: relative
periods before orders ("last year" is no "latest"), numbers before years, text conditions
before known values. Words left over become a text match on the model's text fields when
no value was recognised, else a warning; nothing understood at all is a text match on
every model (``fallback``), or with ``strict`` an error.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from agent_search.language import CHINESE, ENGLISH, HAN_CHAR, normal_form
from agent_search.query.dsl import (
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    TEXT_KINDS,
    DSLGenerationError,
    ModelSchema,
)
from agent_search.query.nl._answer._leftover import leftover_words
from agent_search.query.nl._answer._readings import asked_elsewhere, unnamed_relation
from agent_search.query.nl._answer._retarget import named_unused, on_child, retarget
from agent_search.query.nl._answer._unsure import unsure
from agent_search.query.nl._lexicon import (
    STOPWORDS,
    adjacent,
    escape_like,
    terms,
    word_spans,
)
from agent_search.query.nl._plan import (
    NOTHING_CONFIDENCE,
    Draft,
    Extractor,
    Plan,
    Question,
    silent,
)
from agent_search.query.nl._reading._schema import (
    Span,
    content_field,
    free_text_fields,
    model_mentions,
    relation_field,
    title_field,
)
from agent_search.query.nl._reading._value_index import value_serials
from agent_search.query.nl._rules import _aggregates as aggregates
from agent_search.query.nl._rules import _aggregates_zh as aggregates_zh
from agent_search.query.nl._rules import _computed as computed
from agent_search.query.nl._rules import _counts as counts
from agent_search.query.nl._rules import _counts_zh as counts_zh
from agent_search.query.nl._rules import _dates as dates
from agent_search.query.nl._rules import _dates_zh as dates_zh
from agent_search.query.nl._rules import _flags as flags
from agent_search.query.nl._rules import _measures as measures
from agent_search.query.nl._rules import _numbers as numbers
from agent_search.query.nl._rules import _numbers_zh as numbers_zh
from agent_search.query.nl._rules import _ordering as ordering
from agent_search.query.nl._rules import _ordering_zh as ordering_zh
from agent_search.query.nl._rules import _text as text
from agent_search.query.nl._rules import _values as values
from agent_search.query.nl._rules._values_zh import names_outside_values

FALLBACK_CONFIDENCE = 0.5
RELAXED = 0.5
"""A text match of leftover words found in no row is dropped: the answer is then scored
as if the words were ignored (understood²) and halved, for the words may have named
something the database does not hold ("customers in Brazil who own a boat")."""
FIELD_EVIDENCE = 0.25
"""What naming one of a model's own fields adds to the evidence that it is the one asked
about, when the question names no model but states a value."""
MAX_TEXT_FIELDS = 4
"""Most fields one text match searches (title, content, then other free-text fields)."""

EXTRACTORS: tuple[Extractor, ...] = (
    dates.relative_dates,
    dates_zh.chinese_dates,
    computed.computed_values,
    aggregates.aggregates,
    aggregates_zh.chinese_aggregates,
    ordering.sort_by,
    ordering.alphabetical,
    measures.ordered_by,
    ordering.field_superlative,
    measures.adjectives,
    ordering.superlatives,
    counts.counts,
    counts_zh.chinese_counts,
    numbers_zh.chinese_comparisons,
    measures.field_numbers,
    numbers.stock,
    numbers.between,
    numbers.comparisons,
    ordering_zh.chinese_superlatives,
    dates.dates,
    flags.flags,
    text.text_conditions,
    values.values,
    ordering.top_n,
)
"""The rules, in the order they claim words of the question."""

READS: Mapping[Extractor, str] = {
    dates_zh.chinese_dates: CHINESE.name,
    computed.computed_values: ENGLISH.name,
    aggregates_zh.chinese_aggregates: CHINESE.name,
    counts_zh.chinese_counts: CHINESE.name,
    numbers_zh.chinese_comparisons: CHINESE.name,
    ordering_zh.chinese_superlatives: CHINESE.name,
}
"""The rules that read questions of one language only (by its record's name); the
others read every question."""

_COUNT = re.compile(r"\b(?:how many|number of|count(?:s|ing)?)\b|多少|几个|几位|几家|几条|"
                    r"数量|总数|个数", re.I)


def parse(query: str, schemas: Sequence[ModelSchema], *, now: dt.datetime,
          strict: bool = False, fuzzy_cutoff: float = values.FUZZY_CUTOFF,
          leftover: list[str] | None = None) -> dict[str, Any]:
    """The QueryDSL dict for ``query`` (see :mod:`agent_search.query.nl`). ``leftover``,
    when given, receives the words no extractor understood (for a second reading)."""
    queryable = [s for s in schemas if s.queryable]
    if not queryable:
        raise DSLGenerationError("no model to query")
    low = normal_form(query)
    mentions = values.names_outside_phrases(
        low, schemas, names_outside_values(low, schemas, model_mentions(low, schemas)))
    read = partial(Question.about, text=query, now=now, schemas=schemas, models=mentions,
                   fuzzy_cutoff=fuzzy_cutoff, serials=value_serials(schemas))
    named = _named_models(low, queryable, mentions)
    if named:  # the model named first is the one asked about (in Chinese, the last)
        q = read(_asked_about(low, named, mentions))
        plan = understand(q)
    else:  # none named: the model the query says most about (ties: the first listed)
        q, plan = _most_said(queryable, read)
        if plan.evidence == 0 and len(queryable) > 1:
            if leftover is not None:
                leftover.extend(leftover_words(q, plan, fields=False))
            return fallback(q, plan, queryable, strict)
    if leftover is not None:
        leftover.extend(leftover_words(q, plan))
    return finish(q, plan, strict)


def _named_models(low: str, queryable: list[ModelSchema],
                  mentions: dict[str, list[Span]]) -> list[tuple[int, ModelSchema]]:
    """The models the question names and where; "... in the TV channel table" says which
    one, over any other named."""
    named = [(spans[0][0], s) for s in queryable if (spans := mentions.get(s.id))]
    tables = [(span[0], s) for s in queryable for span in mentions.get(s.id, [])
              if re.match(r"\s+table\b", low[span[1]:])]
    return tables or named


def _most_said(queryable: list[ModelSchema],
               read: Callable[[ModelSchema], Question]) -> tuple[Question, Plan]:
    """The model the question says most about when it names none, read and understood;
    naming its own fields adds to a model's evidence ("which continent is X in"). Ties:
    the first listed."""
    best: tuple[Question, Plan] | None = None
    for schema in queryable:
        candidate = read(schema)
        found = understand(candidate)
        if found.evidence > 0:
            found.evidence += FIELD_EVIDENCE * len(candidate.own_fields_named)
        if best is None or found.evidence > best[1].evidence:
            best = (candidate, found)
    assert best is not None
    return best


def _asked_about(low: str, named: list[tuple[int, ModelSchema]],
                 mentions: dict[str, list[Span]]) -> ModelSchema:
    """The model a question is about among those it names: the first named in English
    ("customers with orders over $100"); in Chinese the modifier comes before the noun it
    modifies ("北京客户的订单" are orders, "订单超过3个的客户" customers), so when every
    name is written in Chinese, the last named."""
    spans = [s for _, schema in named for s in mentions.get(schema.id, [])]
    if HAN_CHAR.search(low) and spans and all(HAN_CHAR.search(low[a:b]) for a, b in spans):
        return max(((mentions[schema.id][-1][0], schema) for _, schema in named),
                   key=lambda p: p[0])[1]
    return min(named, key=lambda p: p[0])[1]


def understand(q: Question) -> Plan:
    """Every condition, order and limit the question states about its target."""
    plan = Plan(target=q.target, used=[s for spans in q.models.values() for s in spans])
    for extract in EXTRACTORS:
        if READS.get(extract, q.language) == q.language:
            extract(q, plan)
    return plan


def finish(q: Question, plan: Plan, strict: bool) -> dict[str, Any]:
    """The plan as a DSL dict, with the notes and warnings about what was not computed
    and what was not understood — or nothing searched (:func:`_silent`) when a part of
    the question found no place in the reading (right or silent)."""
    grouped = plan.grouped
    if not plan.wheres and not plan.orders and not q.target_spans and not grouped:
        return fallback(q, plan, [q.target], strict)
    count_asked = bool(_COUNT.search(q.low)) and not grouped
    if count_asked:
        plan.notes.append("a count is asked for: Result.total is the number of matches")
    unused_field = _warn_unused_fields(q, plan)
    words = leftover_words(q, plan)
    reason = unused_field or _unplaced(q, plan, words)
    if reason is not None:  # a part of the question found no place
        return _silent(plan, reason)
    found_terms, relax = _leftover(q, plan, words)
    unplaced = None if found_terms else _unused_name(q, words)
    if unplaced is not None:  # a stated name left out of the reading
        return _silent(plan, unplaced)
    model, wheres = _answer_rows(q, plan)
    draft = retarget(q, plan, plan.draft(model, wheres, terms=found_terms, relax=relax,
                                         total_asked=count_asked))
    return _accounted(q, plan, draft) if isinstance(draft, Draft) else draft


def _unplaced(q: Question, plan: Plan, words: list[str]) -> str | None:
    """Why a part of the question found no place in the reading, if one did not: an
    extreme nothing is ordered by, a reading the parser is unsure of
    (:func:`~._answer._unsure.unsure`), a quantity no rule placed."""
    grouped = plan.grouped
    return _unmet_extreme(words, plan, grouped) or unsure(q, plan, grouped) or \
        _unplaced_quantity(q, words)


def _accounted(q: Question, plan: Plan, draft: Draft) -> dict[str, Any]:
    """The draft as a DSL dict — or nothing searched when a table named is not accounted
    for by it, it picked a relation among two the question does not tell apart, or a
    field asked is one its rows lack."""
    unused = named_unused(q, draft)
    out = draft.to_json()
    unused = unused or unnamed_relation(q, out) or asked_elsewhere(q, plan.used, out)
    return out if unused is None else _silent(plan, unused)


def _silent(plan: Plan, reason: str) -> dict[str, Any]:
    """Nothing searched, and why (see :func:`~._plan.silent`)."""
    return silent(plan.warnings, reason)


def _answer_rows(q: Question, plan: Plan) -> tuple[str, list[dict[str, Any]]]:
    """The model the answer is computed on and the conditions as said of its rows: the
    target's, or another's (``Plan.answer_model``) when every condition can be said of
    it — else the target's rows, nothing computed on the other's."""
    if plan.answer_model is None or plan.answer_relation is None:
        return q.target.id, plan.wheres
    through = [_on_answer(q, plan, w) for w in plan.wheres]
    kept = [w for w in through if w is not None]
    if len(kept) == len(through):
        return plan.answer_model, kept
    plan.group_by, plan.aggregates, plan.aggregate_orders = [], [], []
    return q.target.id, plan.wheres


def _on_answer(q: Question, plan: Plan, where: dict[str, Any]) -> dict[str, Any] | None:
    """A condition as said of the rows the answer is computed on: one on their own field
    (said through the target's relation to them: "official" languages) is theirs, any
    other goes through their relation back to the target."""
    assert plan.answer_model is not None and plan.answer_relation is not None
    forward = next((r.name for r in q.target.relations if r.type == "hasMany"
                    and r.model.lower() == plan.answer_model.lower()), None)
    return on_child(where, forward, plan.answer_relation)


_CONDITION_KINDS = NUMERIC_KINDS | TEMPORAL_KINDS | {"boolean"}
"""Kinds of field a question names to state a condition on (numbers, dates, flags)."""


def _warn_unused_fields(q: Question, plan: Plan) -> str | None:
    """A numeric, date or boolean field named in full with no condition on it ("the
    average unit price") is a warning: something was asked that was not understood.
    Beside numbers computed it is a reason to answer nothing (returned): "the total
    number of platforms per location" counted per location, or "the maximum number of
    total passengers" taken of another field, are not the numbers asked for."""
    constrained = plan.stated()
    for span, cand, _ in q.own_fields_named:
        named = cand.field
        if named.kind in _CONDITION_KINDS and plan.free(span) and named.name not in constrained:
            said = f"{q.quote(span)!r} names the field {named.name}"
            if plan.grouped and named.kind in NUMERIC_KINDS and _computed_on(q, plan, span):
                return (f"{said}, and the numbers computed are not of it; none are "
                        "shown (they are not the ones asked for)")
            plan.warn(f"{said} but no condition on it was understood")
    return None



_FUNCTION_BEFORE = re.compile(r"\b(?:total|sum|average|avg|mean|maximum|minimum|max|min|"
                              r"number\s+of|count\s+of)\b[\w\s]{0,24}$")


def _computed_on(q: Question, plan: Plan, span: Span) -> bool:
    """Numbers are asked of the field named at ``span``: a function other than a count
    is computed, or an aggregate word comes right before it ("the total number of
    platforms")."""
    return any(a != "count" for a in plan.aggregates) or \
        _FUNCTION_BEFORE.search(q.low[:span[0]]) is not None


def _leftover(q: Question, plan: Plan, words: list[str]) -> tuple[list[str], bool]:
    """Leftover words: a text match when no value was recognised (dropped when nothing
    matches only if they just modify a name: ``relax``), else ignored with a warning and
    a lower confidence. Returns the text match's terms and ``relax``."""
    if not words:
        return [], False
    if plan.grouped:  # a text match would change the numbers asked for
        _ignored(q, plan, words)
        return [], False
    # beside a known value, leftover words are ignored — unless the question names no
    # model: then they may say what is sought ("laptops by Apex"), a text match that is
    # dropped again when no row has them
    if plan.value_conditions and q.target_spans:
        plan.notes.append("ignored: " + ", ".join(words))
        _ignored(q, plan, words)
        return [], False
    before = plan.confidence
    found_terms = text_match(q, plan, words)
    if not found_terms:
        _ignored(q, plan, words)
        return [], False
    name_part = modifies_a_name(q.low, words, [*q.target_spans, *q.own_field_spans])
    relax = plan.value_conditions > 0 or name_part or _may_drop(q, plan, words)
    if not name_part:
        plan.warnings.append("not understood as a condition, matched as text: "
                             + ", ".join(repr(w) for w in words))
    if relax and not name_part:  # dropped: as if ignored, halved (see RELAXED)
        plan.relax_confidence = before * RELAXED * understood_factor(len(words),
                                                                 content_words(q.low))
    return found_terms, relax


def _may_drop(q: Question, plan: Plan, words: list[str]) -> bool:
    """A word left over never narrows the answer to nothing: when the model is named or a
    condition understood, finding no row with the words drops them (with a warning) —
    unless one of them is written as a name ("orders by Zorro Quixote"): a stated name
    that no row has is an honest empty answer."""
    return not any(_written_as_name(q, w) for w in words) and (
        bool(q.target_spans) or bool(plan.wheres[:-1]) or bool(plan.orders))


_EXTREME_WORDS = re.compile(r"highest|lowest|fewest|largest|smallest|biggest|greatest|"
                            r"max(?:imum)?|min(?:imum)?", re.I)


_EXTREMES: tuple[Callable[[str], object], ...] = (
    _EXTREME_WORDS.fullmatch, ordering_zh.EXTREMES.__contains__,
    ordering.SUPERLATIVE.fullmatch, measures.ADJECTIVE.fullmatch)
"""How a word says an extreme: the words above, a Chinese extreme, a superlative
("tallest") or a measuring adjective."""


def _unmet_extreme(words: list[str], plan: Plan, grouped: bool) -> str | None:
    """A superlative left over ("the player with the greatest height" with no height to
    order by): the records found are not the one asked for, so none are shown."""
    if plan.orders or grouped:
        return None
    word = next((w for w in words if any(said(w) for said in _EXTREMES)), None)
    return None if word is None else (f"could not tell what {word!r} is measured by; no "
                                      "records are shown (they would not be the one asked "
                                      "for)")


def _unused_name(q: Question, words: list[str]) -> str | None:
    """A name the question states (written capitalised mid-sentence, or a number) among
    the words the reading ignored ("students taught by MARROTTE KIRK" read as the
    teachers called Marrotte): the rows shown would meet a condition the question did
    not state and miss the one it did, so none are shown."""
    name = next((w for w in words if _stated_name(q, w)), None)
    return None if name is None else (
        f"the question names {name!r} and the reading found no place for it; no records "
        "are shown (they would not be the ones asked for)")


_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*|[\"'“(]\s*)$")


def _stated_name(q: Question, word: str) -> bool:
    """``word`` written as a name where it stands: capitalised or a number, not the
    first word of a sentence or of a quotation, and not one of the question's own
    words written in capitals (a question all in capitals states no name)."""
    if not _name_like(word) or q.text.upper() == q.text:
        return False
    return any(not _SENTENCE_START.search(q.text[:m.start()]) for m in _places(word, q.text))


def _name_like(word: str) -> bool:
    """Written as a name is: capitalised, or a number."""
    return word[:1].isupper() or word[:1].isdigit()


def _places(word: str, text: str) -> Iterator[re.Match[str]]:
    """Where ``word`` stands whole in ``text``."""
    return re.finditer(r"(?<!\w)" + re.escape(word) + r"(?!\w)", text)


_QUANTITY = re.compile(
    r"(?:less|fewer|lower|smaller|younger|earlier|more|greater|higher|bigger|larger|longer|"
    r"older|later|taller|heavier|lighter|richer|poorer|cheaper)|"
    r"min(?:imum)?|max(?:imum)?|average|avg|mean|median|sum|"
    r"once|twice|single|one|two|three|four|five|six|seven|eight|nine|ten", re.I)
"""Words that state a comparison, an aggregate or a number (grammar, not a schema)."""


_PRONOUN_ONE = re.compile(r"\b(?:the|which|each|every|any|no|this|that)\s+one\b|"
                          r"\bone\s+(?:of|another)\b", re.I)


def _unplaced_quantity(q: Question, words: list[str]) -> str | None:
    """A comparison, aggregate or number word no extractor placed ("revenue *larger*
    than some companies'", "the *minimum* and maximum" with only the maximum computed,
    "only *one* plant"; not "one" as a pronoun, "the one with"): the rows or numbers
    shown do not meet what it states."""
    word = next((w for w in words if _QUANTITY.fullmatch(w) and not (
        w.lower() == "one" and _PRONOUN_ONE.search(q.low))), None)
    return None if word is None else (
        f"{word!r} states a comparison or a quantity that the reading did not place; no "
        "records are shown (they would not meet it)")


def _written_as_name(q: Question, word: str) -> bool:
    """Capitalised (or a number) where it stands, other than as the question's first word."""
    return _name_like(word) and any(q.text[:m.start()].strip() for m in _places(word, q.text))


def _ignored(q: Question, plan: Plan, words: list[str]) -> None:
    plan.warnings.append("not understood, ignored: " + ", ".join(repr(w) for w in words))
    plan.confidence *= understood_factor(len(words), content_words(q.low))


def understood_factor(dropped: int, content: int) -> float:
    """``understood²``: the confidence left when ``dropped`` of ``content`` content words
    were not understood. Rows that meet the reading of one word in two answer a part of
    the question that is rarely what was asked ("Jazz tracks by Zorro Quixote" are not all
    Jazz tracks). The square was chosen on the dev questions of ``bench/calibrate_db.py``
    (against ``0.5 + 0.5·u`` and ``u``): with the db floor 0.3 it keeps all 35 of their
    in-scope questions and 1 of 32 out-of-scope or unanswerable ones (6 for the others)."""
    if content <= 0:
        return 1.0
    understood = max(0.0, 1.0 - dropped / content)
    return understood * understood


def content_words(low: str) -> int:
    """Words of the query that could carry meaning (not stopwords)."""
    return sum(1 for word, _, _ in word_spans(low)
               if len(w := word.strip(".'’-")) >= 2 and w not in STOPWORDS)


def modifies_a_name(low: str, words: list[str], names: list[Span]) -> bool:
    """Every word stands right next to the name of the model or of one of its fields
    ("music genres", "phone numbers"): read together they may just be that name, so a
    text match on them may be dropped when no row has them."""
    for word in words:
        spans = [m.span() for m in _places(word.lower(), low)]
        if not spans or not all(any(adjacent(w, n, low) for n in names) for w in spans):
            return False
    return True


def text_match(q: Question, plan: Plan, words: list[str]) -> list[str]:
    """``like`` on the target's title and content fields (or, without them, the title of
    a related model: "orders of headphones" → ``product.name``) and its other text fields,
    any word; the words (singular stems) are returned as ranking terms."""
    target = q.target
    fields = [f for f in (title_field(target), content_field(target)) if f]
    if not fields:
        fields = _related_title(q)
    fields += [f for f in free_text_fields(target) if f not in fields]
    fields = fields[:MAX_TEXT_FIELDS]
    found_terms = terms(words)
    if not fields:
        plan.notes.append("ignored: " + ", ".join(words))
        return []
    plan.wheres.append(_any_like(fields, found_terms))
    plan.notes.append(f"text match on {', '.join(fields)}: " + ", ".join(found_terms))
    plan.confidence = min(plan.confidence, FALLBACK_CONFIDENCE)
    return found_terms


def _any_like(fields: list[str], found_terms: list[str]) -> dict[str, Any]:
    """A condition met when any of ``fields`` contains any of the terms."""
    ors = [{"field": f, "op": "like", "value": f"%{escape_like(t)}%"}
           for f in fields for t in found_terms]
    return ors[0] if len(ors) == 1 else {"or": ors}


def _related_title(q: Question) -> list[str]:
    """The title of the first model the target points at (hasOne) that has one."""
    return next(([relation_field(rel.name, title)] for rel, _, title in q.titled_links()), [])


def fallback(q: Question, plan: Plan, models: list[ModelSchema],
             strict: bool) -> dict[str, Any]:
    """Nothing understood: a text match of the leftover words on every model's title and
    content (or free text) fields; nothing to match is an empty answer, never the whole
    table. With ``strict``, an error."""
    words = leftover_words(q, plan, fields=False)
    if strict:
        raise DSLGenerationError(
            f"could not turn the query into a QueryDSL (query.strict is on): "
            f"no model, value or condition recognised in {q.text[:80]!r}")
    found_terms = terms(words)[:6]
    queries = []
    for s in models:
        fields = _fallback_fields(s)
        if not fields or not found_terms:
            continue
        queries.append({"model": s.id, "terms": found_terms,
                        "wheres": [_any_like(fields[:4], found_terms)]})
    if not queries:
        shown = ", ".join(repr(w) for w in words) or repr(q.text[:80])
        return {"queries": [], "explanation": "nothing recognised; nothing searched",
                "fallback": True, "confidence": NOTHING_CONFIDENCE,
                "warnings": [f"the query was not understood ({shown}); no records "
                             "are shown"]}
    return {"queries": queries, "fallback": True,
            "explanation": "text match: " + ", ".join(found_terms),
            "warnings": ["no condition recognised; fell back to a text match"],
            "confidence": FALLBACK_CONFIDENCE}


def _fallback_fields(s: ModelSchema) -> list[str]:
    title = title_field(s)
    if title:
        return [title, *filter(None, [content_field(s)])]
    return [f.name for f in s.fields if f.kind in TEXT_KINDS and not f.primary
            and not f.name.startswith("__yao_") and not f.values]
