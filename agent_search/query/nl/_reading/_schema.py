"""The models as the parser sees them: which fields a condition can be on (own, one
relation away, two away), where the question names models and fields, and which field a
number, date or text is most likely about.

Pure functions of the schemas and the lower-cased question; no parser state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from agent_search.language import HAN_CHAR, normal_form
from agent_search.query.dsl import (
    NUMERIC_KINDS,
    TEMPORAL_KINDS,
    TEXT_KINDS,
    FieldSchema,
    ModelSchema,
    RelationSchema,
)
from agent_search.query.nl._lexicon import (
    STOPWORDS,
    WORD,
    find_phrase,
    is_plural,
    overlaps,
    plural_forms,
    word_spans,
    words_of,
)
from agent_search.query.nl._reading._abbreviations import written_out
from agent_search.query.nl._reading._units import CURRENCY_UNITS, FIELD_UNITS, MONEY_NAME, SIZE_NAME

Span = tuple[int, int]
"""Start and end of a piece of the question (character offsets)."""


def overlaps_any(span: Span, spans: Iterable[Span]) -> bool:
    """``span`` overlaps one of ``spans`` (a piece already read, quoted or named)."""
    return any(overlaps(span, s) for s in spans)


def every_span(mentions: Mapping[str, list[Span]]) -> list[Span]:
    """The spans of ``mentions`` (spans by model), all of them in one list."""
    return [s for spans in mentions.values() for s in spans]


def spans_outside(mentions: Mapping[str, list[Span]], inside: Sequence[Span]
                  ) -> dict[str, list[Span]]:
    """``mentions`` (spans by model) without the spans that lie within a longer span of
    ``inside`` (a value written there: its words are the value's, not a model's name);
    a model left with no span is dropped."""
    out: dict[str, list[Span]] = {}
    for model_id, spans in mentions.items():
        kept = [s for s in spans if not any(
            v[0] <= s[0] and s[1] <= v[1] and v[1] - v[0] > s[1] - s[0] for v in inside)]
        if kept:
            out[model_id] = kept
    return out


def relation_field(relation: str, field: str) -> str:
    """``field`` of the model ``relation`` points at, said from the model that has the
    relation: ``relation.field`` ("album.Title"), the one spelling the DSL reads for a
    condition, order or group on a related model (it splits at the first dot, resolves
    ``relation`` among the model's own relations, by name, not by the related model's
    id, and the rest on the model it points at). ``field`` may itself be such a path from
    the related model ("artist.Name" → "album.artist.Name"); how many hops a clause
    accepts is the DSL's to check (conditions two, orders and groups one)."""
    return f"{relation}.{field}"


@dataclass(slots=True)
class Candidate:
    """A field a condition may be on, and the path that reaches it from the target."""

    path: str  # "Field", "relation.Field" or "relation.relation2.Field"
    schema: ModelSchema
    field: FieldSchema
    relation: RelationSchema | None
    second: RelationSchema | None = None


class FieldMention(NamedTuple):
    """A field named in the question; ``strong`` when its full name matched, weak for its
    last word alone ("price" for UnitPrice)."""

    span: Span
    candidate: Candidate
    strong: bool


def candidates(target: ModelSchema, by_id: Mapping[str, ModelSchema]) -> list[Candidate]:
    """The target's fields, those of every related model, and (two hops, hasOne only:
    track → album → artist) the fields with known values of the models those point at."""
    related = [(rel, other) for rel in target.relations
               if (other := by_id.get(rel.model.lower())) is not None]
    out = [Candidate(f.name, target, f, None) for f in target.fields]
    out += [Candidate(relation_field(rel.name, f.name), other, f, rel)
            for rel, other in related for f in other.fields]
    for rel, other in related:
        if rel.type == "hasOne" or is_link_of(other, target):
            out.extend(_second_hop(target, rel, other, by_id))
    return out


def is_link_of(link: ModelSchema, target: ModelSchema) -> bool:
    """``link`` is a table of pairs of a many-to-many relation, one side ``target``
    (every row of ``Customer_Addresses`` is a customer and an address, with maybe a date
    or type beside them): its own columns point at two tables or more, one of them
    ``target``. Through it the target reaches the other side's fields with known values
    ("customers who live in Colorado": the address's state)."""
    ends = [r for r in link.relations if r.type == "hasOne"]
    return len(ends) >= 2 and any(r.model.lower() == target.id.lower() for r in ends) and \
        len({r.foreign.lower() for r in ends}) >= 2


def _second_hop(target: ModelSchema, rel: RelationSchema, other: ModelSchema,
                by_id: Mapping[str, ModelSchema]) -> list[Candidate]:
    out: list[Candidate] = []
    for rel2 in other.relations:
        third = by_id.get(rel2.model.lower())
        if rel2.type != "hasOne" or third is None or third.id == target.id:
            continue
        out.extend(Candidate(relation_field(rel.name, relation_field(rel2.name, f.name)),
                             third, f, rel, rel2)
                   for f in third.fields if f.values)
    return out


# -- models ------------------------------------------------------------------------------


MAX_COMMENT_NAME_CHARS = 8
"""A Chinese description (a database comment) this short and of one word is a name."""


def chinese_name(description: str | None) -> str | None:
    """A table's or column's Chinese comment that is just its name (``COMMENT ON COLUMN
    city IS '城市'``, the usual way Chinese schemas name English columns), lower-cased;
    None for a sentence, for anything longer than :data:`MAX_COMMENT_NAME_CHARS` or
    without Chinese."""
    text = normal_form((description or "").strip())
    if 2 <= len(text) <= MAX_COMMENT_NAME_CHARS and HAN_CHAR.search(text) and \
            re.fullmatch(r"\w+", text):
        return text
    return None


MAX_COMMENT_NAME_WORDS = 4
"""An English description of this many words or fewer, with no sentence in it, is a
name ("account balance" for ``acc_bal``)."""
_COMMENT_NAME = re.compile(r"[a-z][a-z'-]*(?: [a-z][a-z'-]*)*")


def comment_name(description: str | None) -> str | None:
    """A table's or column's comment that is just its name written out, lower-cased: a
    Chinese one (:func:`chinese_name`) or a few English words (``COMMENT ON COLUMN
    customer.acc_bal IS 'Account balance'``, the schema's own expansion of an
    abbreviated name); None for a sentence or anything longer."""
    chinese = chinese_name(description)
    if chinese is not None:
        return chinese
    text = " ".join((description or "").lower().split())
    if text and _COMMENT_NAME.fullmatch(text) and len(text.split()) <= MAX_COMMENT_NAME_WORDS:
        return text
    return None


def model_phrases(schema: ModelSchema) -> frozenset[str]:
    """What the question may call a model: its id, table and label (or a comment that is a
    name, :func:`comment_name`), singular or plural, with or without spaces ("invoice lines",
    "invoicelines")."""
    return _model_phrases(schema.id, schema.table,
                          schema.label or comment_name(schema.description))


@lru_cache(maxsize=1024)
def _model_phrases(model_id: str, table: str, label: str | None) -> frozenset[str]:
    names = {words_of(model_id), words_of(table)}
    if label:
        names.add(normal_form(label))
    out: set[str] = set()
    for n in names:
        if n:
            out |= plural_forms(n)
            out.add(n.replace(" ", ""))
    return frozenset(out)


def model_mentions(low: str, schemas: Sequence[ModelSchema]) -> dict[str, list[Span]]:
    """Where each model is named; a longer name wins over a shorter one inside it
    ("invoice line" over "invoice")."""
    found: dict[str, list[Span]] = {}
    squashed = _squashed_runs(low)
    for schema in schemas:
        spans: list[Span] = []
        for phrase in sorted(model_phrases(schema)):
            spans += find_phrase(low, phrase)
            if " " not in phrase:  # "high schoolers" for a model Highschooler
                spans += squashed.get(phrase, [])
        if spans:
            found[schema.id] = sorted(set(spans))
    _head_word_mentions(low, schemas, found)
    _link_tables_as_their_head(schemas, found)
    for sid, spans in list(found.items()):
        keep = [s for s in spans if not _inside_a_longer_name(s, sid, found)]
        if keep:
            found[sid] = keep
        else:
            del found[sid]
    return found


def _link_tables_as_their_head(schemas: Sequence[ModelSchema],
                               found: dict[str, list[Span]]) -> None:
    """A link table of a many-to-many relation (every column a key pointing at another
    table) named as a compound whose last word is one of the tables it links
    ("train stations" for ``train_station``) names that table: its rows are the
    pairs, not the things asked about ("how many train stations" counts stations)."""
    by_id = {schema.id.lower(): schema for schema in schemas}
    for schema in schemas:
        if schema.id not in found or not is_link_table(schema):
            continue
        model = _head_table(schema, by_id)
        if model is not None:
            found[model] = sorted({*found.get(model, []), *found.pop(schema.id)})


def _head_table(link: ModelSchema, by_id: Mapping[str, ModelSchema]) -> str | None:
    """The one table ``link`` (a name of two words or more) links whose name is its
    last word, or None."""
    words = words_of(link.table)
    head = words.rpartition(" ")[2]
    heads = [r.model for r in link.relations if r.type == "hasOne"
             and (other := by_id.get(r.model.lower())) is not None
             and plural_forms(head) & plural_forms(words_of(other.table))]
    if len(heads) != 1 or len(words.split()) <= 1:
        return None
    return by_id[heads[0].lower()].id


def is_link_table(schema: ModelSchema) -> bool:
    """Every column is the own column of a relation to another table, two or more."""
    own = {r.foreign.lower() for r in schema.relations if r.type == "hasOne"}
    return len(own) >= 2 and all(f.name.lower() in own for f in schema.fields)


def _head_word_mentions(low: str, schemas: Sequence[ModelSchema],
                        found: dict[str, list[Span]]) -> None:
    """A model with a name of several words named by a shorthand (:func:`_shorthands`:
    "players" for a table ``poker_player``) when it is not already named in full: the
    question's shorthand for the one model it can mean."""
    by_id = {schema.id: schema for schema in schemas}
    taken = every_span(found)
    for head, sid in _shorthands(schemas).items():
        if sid in found or head == words_of(by_id[sid].table):
            continue
        spans = [s for form in plural_forms(head) for s in find_phrase(low, form)
                 if not overlaps_any(s, taken)]
        if spans:
            found[sid] = sorted(set(spans))


def _shorthands(schemas: Sequence[ModelSchema]) -> dict[str, str]:
    """Shorthand → model id, for the shorthands (:func:`_short_names`) of one model only:
    no other model's name ends in or is that word."""
    field_words = {words_of(f.name).rpartition(" ")[2] for schema in schemas
                   for f in schema.fields}
    full_fields = {words_of(f.name) for schema in schemas for f in schema.fields}
    heads: dict[str, set[str]] = {}
    for schema in schemas:
        for name in {words_of(schema.id), words_of(schema.table)}:
            for short in _short_names(name, field_words, full_fields):
                heads.setdefault(short, set()).add(schema.id)
    return {head: next(iter(owners)) for head, owners in heads.items() if len(owners) == 1}


def _short_names(name: str, field_words: set[str], full_fields: set[str]) -> list[str]:
    """A model name's last word (over three letters, no stopword) unless it is the last
    word of any field's name ("states" for a field ``state`` is that field, not a table
    ``area_code_state``); and the last two words of a name of three or more ("available
    features" for other_available_features) unless a field is called so."""
    out = []
    head = name.rpartition(" ")[2]
    if len(head) > 3 and head not in STOPWORDS and not plural_forms(head) & field_words:
        out.append(head)
    words = name.split()
    if len(words) >= 3 and not plural_forms(" ".join(words[-2:])) & full_fields:
        out.append(" ".join(words[-2:]))
    stem = _abbreviated_tail(name)
    if stem is not None and not plural_forms(stem) & field_words:
        out.append(stem)
    return out


_VOWELS = frozenset("aeiouy")
_ENDINGS = re.compile(r"(?:e|o)(?:rs?|st|ds?|ns?)|ists?|ings?|ies|es|s|ts")
"""English word endings (grammar): a name ending so is one word, not a word and an
abbreviation ("drivers", "pitstops")."""


def _abbreviated_tail(name: str) -> str | None:
    """A name of one word that is a word of four letters or more and an abbreviation of
    three or four letters written together ("useracct": "user" + "acct"; not
    "custinfo": "info" has two vowels; not "drivers": an English ending): the word names
    the model ("users"). An abbreviation is told by its letters — consonants but for its
    first letter — not by a list of abbreviations."""
    if " " in name or not name.isalpha():
        return None
    for cut in (len(name) - 4, len(name) - 3):
        head, tail = name[:cut], name[cut:]
        if len(head) >= 4 and not any(ch in _VOWELS for ch in tail[1:]) and \
                not _ENDINGS.fullmatch(tail) and head[-1] not in _VOWELS:
            return head
    return None


def _squashed_runs(low: str) -> dict[str, list[Span]]:
    """Runs of two or three words written together ("high schoolers" → "highschoolers"),
    for model names that are compounds of words."""
    words = [m.span() for m in WORD.finditer(low)]
    out: dict[str, list[Span]] = {}
    for i in range(len(words)):
        for n in (2, 3):
            if i + n > len(words):
                break
            span = (words[i][0], words[i + n - 1][1])
            out.setdefault(re.sub(r"[\s_-]+", "", low[span[0]:span[1]]), []).append(span)
    return out


def _inside_a_longer_name(span: Span, sid: str, found: dict[str, list[Span]]) -> bool:
    return any(o != sid and any(overlaps(span, t) and (t[1] - t[0]) > (span[1] - span[0])
                                for t in ts)
               for o, ts in found.items())


# -- fields ------------------------------------------------------------------------------


def field_mentions(low: str, cands: list[Candidate]) -> list[FieldMention]:
    """Each field named in the question (fields two hops away are reached through their
    values only; a relation's key is not a field to name)."""
    out: list[FieldMention] = []
    words = word_spans(low)
    for cand in filter(_nameable, cands):
        label = cand.field.label or comment_name(cand.field.description)
        out.extend(FieldMention(span, cand, strong)
                   for phrase, strong in sorted(_field_phrases(
                       cand.field.name, label, cand.field.kind in TEMPORAL_KINDS))
                   if phrase in low  # most are not: skip the call
                   for span in find_phrase(low, phrase))
        out.extend(FieldMention(span, cand, True)
                   for span in written_out(words, words_of(cand.field.name)))
    return out


def _nameable(cand: Candidate) -> bool:
    """A field the question may name: not two hops away (reached through its values
    only), not the key a relation points at."""
    rel = cand.relation
    return cand.second is None and not (
        rel is not None and rel.type == "hasOne" and cand.field.name == rel.key)


@lru_cache(maxsize=4096)
def _field_phrases(name: str, label: str | None,
                   temporal: bool = False) -> frozenset[tuple[str, bool]]:
    """What the question may call a field: its name or label (strong), the event a date
    field records said as a verb ("hired" for ``HireDate``, "ordered" for "Ordered at"),
    who does what a "<verb>ed by" field records, or a part of a longer name (weak)."""
    full = words_of(name)
    strong = [full, *_squashed(full), *([normal_form(label)] if label else []),
              *_agent_nouns(full), *_counted_nouns(full)]
    phrases = {(p, True) for n in strong for p in plural_forms(n)}
    if temporal:
        phrases |= {(verb, True) for verb in _event_verbs(full, label)}
    return frozenset(phrases | {(p, False) for p in _partial_names(full)})


_COUNT_NAME = re.compile(r"^(?:(?P<noun>[a-z ]+?)\s+(?:count|cnt|num|number|no)|"
                         r"(?:num|number|no|n|count|cnt)(?:\s+of)?\s+(?P<noun2>[a-z ]+))$")


def _counted_nouns(full: str) -> list[str]:
    """"number of bedrooms" for ``bedroom_count``, ``num_bedrooms``, ``no_of_rooms``: a
    count column is said as the number of what it counts."""
    m = _COUNT_NAME.match(full)
    noun = (m.group("noun") or m.group("noun2")) if m else None
    if not noun or noun in STOPWORDS:
        return []
    plural = noun if is_plural(noun) else next(
        (p for p in sorted(plural_forms(noun)) if p != noun and is_plural(p)), noun)
    return [f"number of {plural}"]


def _squashed(full: str) -> list[str]:
    """"hometown" for Home_Town."""
    return [full.replace(" ", "")] if " " in full else []


def _event_verbs(full: str, label: str | None) -> set[str]:
    """"aired" for Original_Air_Date, "hired" for HireDate, "ordered" for "Ordered at"."""
    return {_past(named[-2]) for named in (full.split(), (label or "").lower().split())
            if len(named) >= 2 and named[-1] in _DATE_WORDS}


def _partial_names(full: str) -> set[str]:
    """Parts of a name of several words a question may use for it: its last word
    ("price" for UnitPrice), a start ("net worth" for Net_Worth_Millions) or an end ("air
    date" for Original_Air_Date); singular or plural."""
    if " " not in full:
        return set()
    parts = full.split()
    out = {p for p in plural_forms(full.rsplit(" ", 1)[1]) if p not in STOPWORDS and p != "id"}
    pieces = [" ".join(parts[:n]) for n in range(2, len(parts))] + [
        " ".join(parts[n:]) for n in range(1, len(parts) - 1)]
    return out | {p for piece in pieces for p in plural_forms(piece)}


def _agent_nouns(full: str) -> set[str]:
    """Who does what a "<verb>ed by" field records: "director" for Directed_by,
    "producer" for produced_by, "creator" for created_by, "owner" for owned_by (the
    regular English forms; a form no question uses is harmless)."""
    words = full.split()
    if len(words) != 2 or words[1] != "by" or not words[0].endswith("ed") or \
            len(words[0]) < 5:
        return set()
    verb = words[0]
    return {verb[:-2] + "or", verb[:-2] + "er", verb[:-1] + "r"}


_DATE_WORDS = frozenset({"date", "at", "on", "time", "day"})


_IRREGULAR_PAST = {"birth": "born", "pay": "paid", "ship": "shipped", "sell": "sold",
                   "buy": "bought", "die": "died", "death": "died", "begin": "begun"}


def _past(verb: str) -> str:
    """"hire" → "hired", "order" → "ordered", "birth" → "born", "created" stays."""
    if verb in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[verb]
    if verb.endswith("ed"):
        return verb
    return verb + ("d" if verb.endswith("e") else "ed")


def is_plain(cand: Candidate) -> bool:
    """Not a key: keys are not compared with amounts or matched to words."""
    if cand.field.primary and cand.schema.primary_key is not None:
        return False  # a part of a composite key (a link table's Language) is an attribute
    foreigns = {r.foreign.lower() for r in cand.schema.relations if r.type == "hasOne"}
    return cand.field.name.lower() not in foreigns


def of_many(cand: Candidate) -> bool:
    """A plain field of the rows the target has many of, one relation away (what is
    counted or computed per target row)."""
    rel = cand.relation
    return cand.second is None and rel is not None and rel.type == "hasMany" and \
        is_plain(cand)


_OPPOSITE = {"hasOne": "hasMany", "hasMany": "hasOne"}


def reverse_relation(rel: RelationSchema, source: ModelSchema,
                     other: ModelSchema) -> RelationSchema | None:
    """``rel`` (of ``source``, to ``other``) seen from ``other``: its relation of the
    opposite type back to ``source`` on the same two keys, swapped."""
    return next((r for r in other.relations if r.type == _OPPOSITE[rel.type]
                 and r.model.lower() == source.id.lower()
                 and r.foreign.lower() == rel.key.lower()
                 and r.key.lower() == rel.foreign.lower()), None)


_DIMENSIONS: tuple[tuple[str, Callable[[FieldSchema, str], object]], ...] = (
    ("duration", lambda field, unit: unit in FIELD_UNITS),
    ("money", lambda field, unit: unit in CURRENCY_UNITS or MONEY_NAME.search(field.name)),
    ("size", lambda field, unit: unit == "bytes" or SIZE_NAME.search(field.name)),
)
"""What a number field measures, by its unit (lower-cased) or its name, first found
first; a number field none of them takes is a plain ``number``."""


def dimension(field: FieldSchema) -> str | None:
    """What a field measures: date, duration, money, size or a plain number (None for
    anything else)."""
    if field.kind in TEMPORAL_KINDS:
        return "date"
    if field.kind not in NUMERIC_KINDS:
        return None
    unit = (field.unit or "").lower()
    return next((name for name, said in _DIMENSIONS if said(field, unit)), "number")


_TAKES = {"number": frozenset({"money", "duration", "size", "number"})}
"""The dimensions a field wanted for a dimension may have (any number for a plain
number; else the dimension itself)."""


def _distance(span: Span, pos: int) -> float:
    """How far a field named at ``span`` is from ``pos``: after it counts half again,
    and 5 more."""
    if span[1] <= pos:
        return pos - span[1]
    return (span[0] - pos) * 1.5 + 5 if span[0] >= pos else 0


def near_field(pos: int, mentions: list[FieldMention], accept: Callable[[Candidate], bool],
               *, window: int = 40) -> Candidate | None:
    """The accepted field mentioned closest before ``pos`` (or just after it); strong
    mentions and own fields first."""
    ranked = [(rank, cand) for span, cand, strong in mentions if accept(cand)
              and (dist := _distance(span, pos)) <= window
              for rank in [dist + (0 if strong else 8) + (0 if cand.relation is None else 4)]]
    return min(ranked, key=lambda r: r[0])[1] if ranked else None


def field_for(cands: list[Candidate], wanted: str, mentions: list[FieldMention],
              pos: int) -> Candidate | None:
    """A field of dimension ``wanted`` (money/duration/size/date/number): the mentioned one
    nearest to ``pos``, else the target's first such field, else a related one."""
    takes = _TAKES.get(wanted, frozenset({wanted}))

    def ok(c: Candidate) -> bool:
        return dimension(c.field) in takes and is_plain(c)
    near = near_field(pos, mentions, ok)
    if near is not None:
        return near
    own = [c for c in cands if c.relation is None and ok(c)]
    if wanted == "number":
        return _only(own)
    related = [c for c in cands if c.relation is not None and c.relation.type == "hasOne"
               and ok(c)]
    return own[0] if own else _only(related)


def _only(cands: list[Candidate]) -> Candidate | None:
    """The one candidate, or None when there are none or several."""
    return cands[0] if len(cands) == 1 else None


def text_field_named(phrase: str, cands: list[Candidate],
                     target: ModelSchema) -> Candidate | None:
    """The target's text field called ``phrase`` ("title", "name", a label); "title" and
    "name" also mean the model's title field."""
    phrase = phrase.strip().lower()
    own = [c for c in cands if c.relation is None and c.field.kind in TEXT_KINDS]
    called = next((c for c in own if phrase in _called(c.field)), None)
    if called is not None:
        return called
    title = title_field(target)
    if phrase.rstrip("s") in ("title", "name") and title:
        return next((c for c in own if c.field.name == title), None)
    return None


def _called(field: FieldSchema) -> frozenset[str]:
    """What a field is called: its name's words and its label, in either number."""
    label = plural_forms(field.label.lower()) if field.label else frozenset()
    return plural_forms(words_of(field.name)) | label


def free_text_fields(schema: ModelSchema) -> list[str]:
    """Other text fields a text match searches: free text first (no known values: names,
    composers, companies), then those with known values (on a permission-aware table
    these are the public rows' only); never keys nor permission columns."""
    keys = {r.foreign.lower() for r in schema.relations if r.type == "hasOne"}
    fields = [f for f in schema.fields if f.kind in TEXT_KINDS and not f.primary
              and not _key_or_system(f.name.lower(), keys)]
    return [f.name for f in sorted(fields, key=lambda f: bool(f.values))]


_SYSTEM_COLUMNS = frozenset({"share", "deleted_at"})
"""Columns the store keeps for itself (besides its ``__yao_`` ones): no text to match."""


def _key_or_system(name: str, keys: set[str]) -> bool:
    """``name`` (lower-cased) is a key pointing at another table, or a column the store
    keeps for itself."""
    return name in keys or name in _SYSTEM_COLUMNS or name.startswith("__yao_")


def title_field(schema: ModelSchema) -> str | None:
    """The model's title field, if it is one of its fields (a schema handed in directly
    may name one it lacks)."""
    title = schema.title_field
    return title if title and schema.field(title) is not None else None


def content_field(schema: ModelSchema) -> str | None:
    """The model's long-text field (description, content, ...), if it has one."""
    names = {f.name.lower(): f.name for f in schema.fields if f.kind in TEXT_KINDS}
    return next((names[n] for n in ("description", "content", "summary", "body", "text")
                 if n in names), None)
