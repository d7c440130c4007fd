"""Follow-up questions read in the context of the earlier turns of a conversation.

A chat is stateless on the wire: each request carries the earlier turns, so every turn is
re-read here with the same rules, and the last one is read against what came before.

Text (knowledge base, web): :func:`read_text` carries the previous question's topic only
when the last turn cannot stand alone: it points back (a third-person or demonstrative
pronoun: "does *that* work over MCP", "can *it* change the messages") or it is an
ellipsis with fewer than two words of its own that say what it is about ("and
asynchronously?"). The pronouns are a closed class of the grammar, and "words of its own"
are the words outside the language's stop words
(:attr:`agent_search.language.Language.stopwords`), so no word of any topic is listed
here. The text is classified once and each rule is a table by language: a Chinese
question points back by a pronoun too, and is never an ellipsis (its words are not
counted); a language without rules of its own neither points back nor is an ellipsis
(it stands alone: nothing is carried that the rules cannot see).

Database: :class:`FollowUpGenerator` wraps the DSL generator. The previous turn's query
(the generator's reading of it, itself read in its own context) is the state:

- a follow-up that names its own table and does not point back starts fresh;
- one that points back and names another table follows the relation from the previous
  rows ("List the employees in Calgary" → "show me their customers": customers whose
  ``employee.City = 'Calgary'``), unless it picks among the previous rows ("which *of
  those* have more than 10 tracks": the previous rows, narrowed);
- otherwise it is read against the previous table: a condition on a field the previous
  query used replaces it ("customers in Germany" → "and in Italy?": the country is
  swapped, not added); other conditions narrow it ("which of those have more than 10
  tracks?"); its own order, limit or aggregate replaces the previous one;
- a follow-up that says nothing about the previous table but stands alone on another one
  (the schema's evidence: the generator read a condition there) is searched alone.

The DSL's ``explanation`` starts with how the follow-up was read, so the search record
says it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_search.language import ENGLISH, Language, classify
from agent_search.query.dsl import (
    DSLGenerator,
    DSLValidationError,
    ModelSchema,
    validate_dsl,
)

MAX_EARLIER_TURNS = 3
"""Earlier user turns re-read (the most recent ones): the state of a conversation is its
last few questions, and each costs a parse."""
MAX_TURN_CHARS = 500

_POINTING = frozenset({"they", "them", "their", "theirs", "themselves", "those", "these",
                       "it", "its", "itself", "one", "ones"})
"""Third-person and demonstrative pronouns, and the pro-form "one(s)": words that stand
for something said before."""
_DEMONSTRATIVES = frozenset({"that", "this"})
"""Demonstratives that are also relative pronouns ("battles *that* ended..."): they point
back only where no word of content comes before them to be relativised ("does that
work", "is this safe", "that one")."""
_POINTING_ZH = re.compile("他们|她们|它们|这些|那些|其中|它的|他们的|这个|那个")
_STOP = ENGLISH.stopwords
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-./]*")
MIN_OWN_WORDS = 2
"""A question with fewer words of its own (outside the stop word lists) is an ellipsis."""


_COMPARISONS = frozenset({"<", "<=", ">", ">=", "between"})


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _points_back_en(text: str) -> bool:
    words = _words(text)
    if any(w in _POINTING for w in words):
        return True
    return any(w in _DEMONSTRATIVES and (i == 0 or words[i - 1] in _STOP)
               for i, w in enumerate(words))


def _points_back_zh(text: str) -> bool:
    return bool(_POINTING_ZH.search(text))


def _ellipsis_en(text: str) -> bool:
    return len(own_words(text)) < MIN_OWN_WORDS


def _never(text: str) -> bool:
    return False


POINTS_BACK: dict[str, Callable[[str], bool]] = {"en": _points_back_en, "zh": _points_back_zh}
"""Whether a question refers to something said before, by language."""
ELLIPSIS: dict[str, Callable[[str], bool]] = {"en": _ellipsis_en, "zh": _never}
"""Whether a question is too short to stand alone, by language."""


def points_back(text: str, language: Language | None = None) -> bool:
    """Whether ``text`` (in ``language``, classified when not given) refers to something
    said before by a pronoun."""
    language = language or classify(text)
    return POINTS_BACK.get(language.name, _never)(text)


def partitive(text: str) -> bool:
    """Whether ``text`` picks among the things said before ("which *of those*", "the
    *ones* in Europe"): the previous rows narrowed, not rows related to them."""
    words = _words(text)
    return "ones" in words or any(w in _POINTING and i > 0 and words[i - 1] == "of"
                                  for i, w in enumerate(words))


def own_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about (outside the stop word lists)."""
    return [w for w in _words(text) if w not in _STOP and w not in _POINTING]


def stands_alone(text: str) -> bool:
    """A question that neither points back nor is an ellipsis (see the module
    docstring); a Chinese one stands alone unless it points back."""
    language = classify(text)
    if points_back(text, language):
        return False
    return not ELLIPSIS.get(language.name, _never)(text)


@dataclass(frozen=True, slots=True)
class TextReading:
    """How the last turn is searched as text: ``query``, and ``how`` it was read
    (``"alone"``, ``"first turn"`` or ``"with the previous question's topic"``)."""

    query: str
    how: str


def read_text(turns: Sequence[str]) -> TextReading:
    """The text query of the conversation whose user turns are ``turns`` (oldest first):
    the last one alone when it stands alone, else with the previous question's words
    (the previous question read the same way, so a chain of follow-ups keeps its
    topic)."""
    turns = [t.strip()[:MAX_TURN_CHARS] for t in turns if t.strip()]
    if not turns:
        return TextReading("", "empty")
    if len(turns) == 1:
        return TextReading(turns[0], "first turn")
    last = turns[-1]
    if stands_alone(last):
        return TextReading(last, "alone")
    previous = read_text(turns[-1 - MAX_EARLIER_TURNS:-1]).query
    carried = f"{previous[-MAX_TURN_CHARS:]} {last}"
    return TextReading(carried, "with the previous question's topic")


# -- database --------------------------------------------------------------------------


@dataclass(slots=True)
class _Read:
    """One turn read in context: its single query (None when nothing was understood)
    and how it was read."""

    query: dict[str, Any] | None
    how: str
    raw: dict[str, Any]


def _single(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The one structured query of a generator's answer: None for a fallback (a text
    match on every model), an abstention or several queries."""
    if raw.get("fallback"):
        return None
    if raw.get("model"):  # one query, written as the answer itself
        return {k: v for k, v in raw.items()
                if k not in ("explanation", "warnings", "confidence", "fallback")}
    queries = raw.get("queries") or []
    return dict(queries[0]) if len(queries) == 1 else None


def _structured(query: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The conditions of ``query`` other than its text match of leftover words (the last
    where when it has ranking ``terms``)."""
    if not query:
        return []
    wheres = list(query.get("wheres") or [])
    if query.get("terms") and wheres:
        wheres = wheres[:-1]
    return wheres


def _settled(query: dict[str, Any]) -> dict[str, Any]:
    """The previous query as the next turn builds on it: without a text match of
    leftover words the generator was unsure of (``relax``), which is dropped when it
    finds nothing and says nothing a follow-up should keep."""
    if not query.get("relax"):
        return query
    out = {k: v for k, v in query.items() if k not in ("relax", "relax_confidence", "terms")}
    out["wheres"] = _structured(query)
    return out


def _fields(where: dict[str, Any]) -> set[str]:
    if "field" in where and where["field"] is not None:
        return {str(where["field"]).lower()}
    return {f for part in (where.get("or") or where.get("and") or []) for f in _fields(part)}


def _through(where: dict[str, Any], relation: str) -> dict[str, Any]:
    """``where`` said of the rows a ``relation`` points at."""
    if where.get("field") is not None:
        field = str(where["field"])
        counted = re.fullmatch(r"count\((.+)\)", field)
        if counted:  # count(rel) of the related rows: not expressible one hop further
            raise ValueError(field)
        return {**where, "field": f"{relation}.{field}"}
    key = "or" if "or" in where else "and"
    return {key: [_through(w, relation) for w in where[key]]}


def _named_queryable(text: str, schemas: Sequence[ModelSchema]) -> list[str]:
    """The models ``text`` names that may be asked for, in the order named."""
    from agent_search.query.nl import named_models

    queryable = {s.id.lower() for s in schemas if s.queryable}
    return [m for m in named_models(text, schemas) if m.lower() in queryable]


def _only(schemas: Sequence[ModelSchema], model: str) -> list[ModelSchema]:
    low = model.lower()
    return [s.model_copy(update={"queryable": s.id.lower() == low}) for s in schemas]


def _relation(schemas: Sequence[ModelSchema], source: str, target: str) -> str | None:
    """The name of a relation of ``source`` to ``target`` (hasOne first), or None."""
    by_id = {s.id.lower(): s for s in schemas}
    schema = by_id.get(source.lower())
    if schema is None:
        return None
    rels = sorted((r for r in schema.relations if r.model.lower() == target.lower()),
                  key=lambda r: r.type != "hasOne")
    return rels[0].name if rels else None


class FollowUpGenerator:
    """A :class:`~agent_search.query.dsl.DSLGenerator` that reads the question in the
    context of the ``earlier`` user turns (oldest first), with ``inner`` reading each
    turn (see the module docstring)."""

    def __init__(self, inner: DSLGenerator, earlier: Sequence[str]) -> None:
        self.inner = inner
        self.name = inner.name
        self.earlier = [t.strip()[:MAX_TURN_CHARS] for t in earlier
                        if isinstance(t, str) and t.strip()][-MAX_EARLIER_TURNS:]

    async def generate(self, query: str, schemas: Sequence[ModelSchema], *,
                       feedback: str | None = None) -> dict[str, Any]:
        state: _Read | None = None
        for turn in self.earlier:
            state = await self._read(state, turn, schemas)
        read = await self._read(state, query, schemas, last=True)
        out = dict(read.raw)
        if read.query is not None and read.how != "alone":
            out = {"queries": [read.query], "confidence": read.raw.get("confidence", 1.0),
                   "warnings": list(read.raw.get("warnings") or [])}
            try:
                validate_dsl(out, schemas)
            except DSLValidationError as exc:  # e.g. a relation one hop too many
                alone = await self._gen(query, schemas)
                warning = f"follow-up reading {read.how!r} not kept ({exc}); read alone"
                read = _Read(_single(alone), "alone", alone)
                out = {**alone, "warnings": [*(alone.get("warnings") or []), warning]}
        out["explanation"] = f"follow-up read {read.how}; " + str(read.raw.get("explanation")
                                                                 or "")
        return out

    async def _gen(self, text: str, schemas: Sequence[ModelSchema]) -> dict[str, Any]:
        try:
            return await self.inner.generate(text, schemas)
        except Exception:  # a reading that fails is a reading that understood nothing
            return {"queries": [], "fallback": True}

    async def _read(self, state: _Read | None, text: str, schemas: Sequence[ModelSchema],
                    *, last: bool = False) -> _Read:
        """``text`` read after ``state``. The last turn's own reading fails as the
        generator fails (the handler then falls back as for any question); an earlier
        turn that fails is a turn that understood nothing."""
        alone = await (self.inner.generate(text, schemas) if last else self._gen(text, schemas))
        if state is None or state.query is None:
            return _Read(_single(alone), "alone", alone)
        settled = _settled(state.query)
        state = _Read(settled, state.how, state.raw)
        previous = str(settled["model"]) if settled else ""
        named = _named_queryable(text, schemas)
        back = points_back(text)
        if named and not back:
            return _Read(_single(alone), "alone", alone)
        if named and named[0].lower() != previous.lower() and not partitive(text):
            return await self._follow(state, named[0], text, schemas, alone)
        return await self._within(state, text, schemas, alone, back)

    async def _compared(self, previous: dict[str, Any], text: str,
                        schemas: Sequence[ModelSchema], raw: dict[str, Any]
                        ) -> tuple[dict[str, Any], dict[str, Any] | None,
                                   list[dict[str, Any]]]:
        """The follow-up read as saying a new bound of a field the previous query
        compared: the field's name put before it, read again; kept only when the reading
        is a condition on that field."""
        from agent_search.query.nl import words_of

        for where in previous.get("wheres") or []:
            field = where.get("field")
            if not field or where.get("op") not in _COMPARISONS:
                continue
            again = await self._gen(f"{words_of(str(field))} {text}", schemas)
            read = _single(again)
            new = _structured(read)
            if new and all(_fields(w) == {str(field).lower()} for w in new):
                return again, read, new
        return raw, _single(raw), []

    async def _follow(self, state: _Read, model: str, text: str,
                      schemas: Sequence[ModelSchema], alone: dict[str, Any]) -> _Read:
        """The rows of ``model`` related to the previous rows, with the follow-up's own
        conditions on ``model``."""
        assert state.query is not None
        relation = _relation(schemas, model, str(state.query["model"]))
        if relation is None:
            return _Read(_single(alone), "alone", alone)
        try:
            through = [_through(w, relation) for w in state.query.get("wheres") or []]
        except ValueError:
            return _Read(_single(alone), "alone", alone)
        own = _single(await self._gen(text, _only(schemas, model)))
        query: dict[str, Any] = {"model": model,
                                 "wheres": [*through, *_structured(own)],
                                 "orders": list((own or {}).get("orders") or [])}
        if own and own.get("limit"):
            query["limit"] = own["limit"]
        how = f"following {model}.{relation} from the previous rows"
        return _Read(query, how, {**alone, "confidence": 1.0})

    async def _within(self, state: _Read, text: str, schemas: Sequence[ModelSchema],
                      alone: dict[str, Any], back: bool) -> _Read:
        """The follow-up read against the previous table: swapped, narrowed, reshaped."""
        assert state.query is not None
        previous = state.query
        only = _only(schemas, str(previous["model"]))
        raw = await self._gen(text, only)
        own = _single(raw)
        new = _structured(own)
        if not new:  # "and over 70?": a new value for a compared field of the previous query
            raw, own, new = await self._compared(previous, text, only, raw)
        shaped = _shaped(own)
        if not back and not new and not shaped and _of_another_table(previous, alone, text):
            return _Read(_single(alone), "alone", alone)  # it says something of another table
        query, kept = _merged(previous, own if shaped else None, new)
        return _Read(query, _how(previous, kept, new),
                     raw if own else {**alone, "confidence": 1.0})


_SHAPE_KEYS = ("orders", "limit", "aggregates", "group_by", "having")
"""What a follow-up may say of the answer's shape ("the top 3", "per country") that
replaces the previous query's."""


def _shaped(own: dict[str, Any] | None) -> bool:
    """The follow-up's own reading says something of the answer's shape (order, limit,
    aggregates, groups)."""
    return own is not None and any(own.get(k) for k in _SHAPE_KEYS if k != "having")


def _of_another_table(previous: dict[str, Any], alone: dict[str, Any], text: str) -> bool:
    """Read alone, the follow-up states conditions on another table than the previous
    query's, and stands as a question of its own."""
    other = _single(alone)
    return other is not None and bool(_structured(other)) \
        and str(other["model"]).lower() != str(previous["model"]).lower() \
        and stands_alone(text)


def _merged(previous: dict[str, Any], shape: dict[str, Any] | None,
            new: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The previous query with its conditions on the fields of ``new`` swapped for
    ``new`` (its text matches kept), the shape of ``shape`` (a reading that states one)
    over its own; a changed query is no longer relaxed. Returns it and the previous
    conditions kept."""
    before = list(previous.get("wheres") or [])
    swapped = {f for w in new for f in _fields(w)}
    structured = _structured(previous)
    kept = [w for w in before if w not in structured or not (_fields(w) & swapped)]
    query = {**previous, "wheres": [*kept, *new]}
    query.update({k: shape[k] for k in _SHAPE_KEYS if shape and shape.get(k)})
    if kept != before or new:
        query.pop("relax", None)
        query.pop("relax_confidence", None)
    return query, kept


def _how(previous: dict[str, Any], kept: list[dict[str, Any]],
         new: list[dict[str, Any]]) -> str:
    """How the follow-up was read against the previous query, in words."""
    replaced = sorted({str(w.get("field") or "a condition")
                       for w in previous.get("wheres") or [] if w not in kept})
    if replaced:
        return "swapping " + ", ".join(replaced)
    if new:
        return f"narrowing the previous query with {len(new)} condition(s)"
    return "as the previous query"
