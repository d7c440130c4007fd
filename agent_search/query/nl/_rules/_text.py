"""Text conditions: quoted text, "named / called / titled X", "containing X", "with X in
the title", "who work at X" → a contains match (``like``) on the field meant (the one
named nearby, the field named, a person's first/last name, the company field for a
workplace, else the model's title field)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_search.query.dsl import TEXT_KINDS
from agent_search.query.nl._lexicon import STOPWORDS, escape_like, overlaps
from agent_search.query.nl._plan import Plan, Question
from agent_search.query.nl._reading._schema import (
    Candidate,
    Span,
    is_plain,
    near_field,
    text_field_named,
    title_field,
)

_QUOTED = re.compile(r"\"([^\"]{1,200})\"|“([^”]{1,200})”|'([^']{1,200})'")
_NAMED = re.compile(r"\b(?:named|called|titled)\s+"
                    r"(?P<v>[\w][\w'’&.-]*(?:\s+[\w][\w'’&.-]*){0,3})", re.I)
_CONTAINS = re.compile(r"\b(?:(?:contain|contains|containing|including|includes|matching|like)"
                       r"\s+(?:(?:the|a|an)\s+)*(?:(?:word|letter|text|substring|string|phrase)\s+)?|"
                       r"with\s+(?:the\s+|a\s+)?(?:word|letter|text|substring|string|phrase)\s+|"
                       r"(?:has|have|having)\s+(?:the\s+|a\s+)?(?:substring|string|phrase)\s+)"
                       r"[\"“']?(?P<v>[\w][\w'’@&.-]*)", re.I)
_MARKED = re.compile(r"\b(?:word|letter|text|substring|string|phrase)\s+\S*$")
_IN_FIELD = re.compile(r"\bwith\s+(?:the\s+(?:words?|text)\s+)?[\"“']?(?P<v>[\w][\w'’&.-]*"
                       r"(?:\s+[\w][\w'’&.-]*){0,4}?)[\"”']?\s+in\s+(?:the|its|their)\s+"
                       r"(?P<f>[a-z]+)\b", re.I)
_WORKPLACE = re.compile(r"\b(?:works?|working|worked|employed)\s+(?:at|for|by)\s+(?:the\s+)?"
                        r"(?P<v>[\w][\w'’&.-]*(?:\s+[\w][\w'’&.-]*){0,3}?)"
                        r"(?=\s*(?:[?.!,;]|$|\s(?:and|or|in|from|with|who|that|since)\b))",
                        re.I)
_DONE_BY = re.compile(r"\b(?P<verb>[a-z]+ed|written)\s+by\s+(?P<v>[\w][\w'’&./-]*"
                      r"(?:\s+[\w][\w'’&./-]*){0,3}?)"
                      r"(?=\s*(?:[?.!,;]|$|\s(?:and|or|in|from|with|on|that|since)\b))", re.I)
WORKPLACE_FIELDS = ("company", "employer", "organisation", "organization", "firm")
"""What a text field holding where someone works is called (its name or label)."""


@dataclass(frozen=True, slots=True)
class StatedText:
    """Text the question asks rows to contain, how it was said, and (for "with X in the
    title") the field it names."""

    value: str
    span: Span
    how: str  # quoted, contains, named, in-field, workplace, done-by
    field: Candidate | None = None


Reader = Callable[[Question, "re.Match[str]"], "StatedText | None"]
"""Reads one match of a rule's pattern: the text stated, or None (not text after all)."""


def _quoted(q: Question, m: re.Match[str]) -> StatedText | None:
    return StatedText(next(g for g in m.groups() if g is not None), m.span(), "quoted")


def _contains(q: Question, m: re.Match[str]) -> StatedText | None:
    """"containing gmail.com" yes; "with email ..." is a field, not text."""
    marked = _MARKED.search(m.group(0)) is not None
    if (m.group("v") in STOPWORDS and not marked) or any(
            overlaps(m.span("v"), f.span) for f in q.fields):
        return None
    return StatedText(q.quote(m.span("v")).rstrip("'’"), m.span(), "contains")


def _named(q: Question, m: re.Match[str]) -> StatedText | None:
    """"named Kyle." ends the sentence, not the name."""
    start, end = m.span("v")
    while end > start + 1 and q.low[end - 1] in ".'’" and not q.low[end:].strip():
        end -= 1
    return StatedText(q.quote((start, end)), (m.start(), end), "named")


def _in_field(how: str, find: Callable[[Question, re.Match[str]], Candidate | None]) -> Reader:
    """A reader of text said to be in a field ``find`` names (none found: no text)."""
    def read(q: Question, m: re.Match[str]) -> StatedText | None:
        field = find(q, m)
        return None if field is None else StatedText(q.quote(m.span("v")), m.span(), how,
                                                     field)
    return read


def _workplace_field(q: Question, m: re.Match[str]) -> Candidate | None:
    return next((c for c in (text_field_named(name, q.candidates, q.target)
                             for name in WORKPLACE_FIELDS) if c is not None), None)


_FIELD_FIRST = ("in-field", "workplace", "done-by")
_RULES: tuple[tuple[re.Pattern[str], bool, Reader], ...] = (
    (_QUOTED, True, _quoted),
    (_CONTAINS, False, _contains),
    (_NAMED, False, _named),
    # "with greatest hits in the title"
    (_IN_FIELD, False, _in_field("in-field", lambda q, m: text_field_named(
        m.group("f"), q.candidates, q.target))),
    # "customers who work at Apple"
    (_WORKPLACE, False, _in_field("workplace", _workplace_field)),
    # "tracks composed by Bach": the Composer field
    (_DONE_BY, False, _in_field("done-by", lambda q, m: _agent_field(m.group("verb"), q))),
)
"""How text is stated: the pattern, whether it reads the question as asked (else
lower-cased) and what a match states."""


def stated_texts(q: Question) -> list[StatedText]:
    """Every text the question states, "with X in the <field>" first."""
    texts = [t for pattern, as_asked, read in _RULES
             for m in pattern.finditer(q.text if as_asked else q.low)
             if (t := read(q, m)) is not None]
    in_field = {t.span: t.field for t in texts if t.field is not None}
    ordered = sorted(texts, key=lambda t: t.how not in _FIELD_FIRST)
    return [StatedText(t.value, t.span, t.how, in_field.get(t.span)) for t in ordered]


def _agent_field(verb: str, q: Question) -> Candidate | None:
    """The target's text field naming who did ``verb``: "composed" → ``Composer``,
    "published" → ``publisher``, "directed" → ``director``, "written" → ``writer``."""
    stem = "writ" if verb == "written" else verb[:-1] if verb.endswith("ed") else verb
    stems = {stem, stem[:-1]} if stem.endswith("e") else {stem, stem + "e"}
    for c in q.candidates:
        if c.relation is not None or c.field.kind not in TEXT_KINDS:
            continue
        name = c.field.name.lower().replace("_", "")
        if any(name in (s + "er", s + "r", s + "or") for s in stems):
            return c
    return None


def text_conditions(q: Question, plan: Plan) -> None:
    """A contains match for each stated text, except a quoted known value (an equality,
    left to the value extractor) and "named X" where X is a known value of a field other
    than the title ("employees named Jane": ``FirstName = 'Jane'``)."""
    for t in stated_texts(q):
        if not plan.free(t.span):
            if t.how == "contains":  # "contains the substring 'Al'": 'Al' was quoted
                plan.used.append(t.span)
            continue
        if not t.value.strip() or _is_known_value(q, t):
            continue
        cand = t.field or near_field(t.span[0], q.fields, _plain_text)
        if cand is None and t.how == "named" and _person_name(q, plan, t):
            continue
        cand = cand or _title_candidate(q)
        if cand is not None:
            value = t.value.strip()
            plan.add(cand.path, "like", f"%{escape_like(value)}%", t.span,
                     f"{cand.path} contains {value!r}")
            plan.value_conditions += 1


def _plain_text(c: Candidate) -> bool:
    """A text field a stated text may be matched in (one value per row)."""
    return c.field.kind in TEXT_KINDS and is_plain(c)


def _is_known_value(q: Question, t: StatedText) -> bool:
    if t.how == "quoted":
        return _exact_value_field(t.value, q.candidates) is not None
    if t.how == "named":
        known = _exact_value_field(t.value, q.candidates)
        return known is not None and known.field.name != q.target.title_field
    return False


def _exact_value_field(text: str, cands: list[Candidate]) -> Candidate | None:
    """The own field (else any) holding ``text`` as a known value."""
    low = text.strip().lower()
    hits = [c for c in cands if any(v.lower() == low for v in c.field.values)]
    return next((c for c in hits if c.relation is None), hits[0] if hits else None)


def _person_name(q: Question, plan: Plan, t: StatedText) -> bool:
    """"customers named Luís": a contains match on first or last name, when the target
    has them (True when handled)."""
    people = [c for c in q.candidates if c.relation is None
              and c.field.name.lower().replace("_", "") in ("firstname", "lastname")]
    if not people:
        return False
    value = t.value.strip()
    if not plan.full():
        plan.wheres.append({"or": [{"field": c.path, "op": "like",
                                    "value": f"%{escape_like(value)}%"} for c in people]})
        plan.notes.append(f"name contains {value!r}")
        plan.evidence += 1.0
        plan.value_conditions += 1
    plan.used.append(t.span)
    return True


def _title_candidate(q: Question) -> Candidate | None:
    title = title_field(q.target)
    if title is None:
        return None
    return next((c for c in q.candidates if c.relation is None and c.field.name == title),
                None)
