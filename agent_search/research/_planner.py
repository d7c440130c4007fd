"""Planners: the parts of a question, and what to search for a part still uncovered.

:class:`BuiltinPlanner` needs no model: the parts come from the question's structure
(:func:`~agent_search.research._plan.plan_question`), and a gap is searched again with
its content words and the names the references found for it bring up (the name of the
author a first search found, say), then with each of its phrases alone.
:class:`LLMPlanner` asks an OpenAI-compatible chat model for both, within the run's
LLM-call budget and deadline; whatever it answers that is not a usable plan (no JSON,
wrong shape, a stall, an error) falls back to the builtin planner, and the run's
``planner`` says so.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import anyio

from agent_search._json_answer import NoJSONAnswer, parse_json_answer
from agent_search.config import ResearchConfig
from agent_search.language import classify
from agent_search.research._plan import _STOP, Part, _tokens, plan_question
from agent_search.types import ResultItem

MAX_QUERY_CHARS = 300
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*")


class Budget(Protocol):
    """What a planner may spend: one LLM call at a time, and the run's time."""

    def take(self) -> bool: ...

    @property
    def seconds_left(self) -> float: ...


class Planner(Protocol):
    async def plan(self, question: str, budget: Budget) -> tuple[list[Part], str]:
        """The parts of ``question`` and the planner's name as the run reports it."""
        ...

    async def gaps(self, question: str, part: str, found: Sequence[ResultItem],
                   tried: Sequence[str], budget: Budget) -> list[str]:
        """Queries for ``part`` the next round searches (``tried``: searched already)."""
        ...


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about (stop words and marks out)."""
    return [t for t in _tokens(text) if t[0].isalnum() and t.lower() not in _STOP]


class BuiltinPlanner:
    """Parts from the question's structure; gap queries from the part's words, the
    names its references bring up, and the part's phrases one at a time."""

    def __init__(self, max_parts: int = 6, per_gap: int = 2) -> None:
        self.max_parts = max_parts
        self.per_gap = per_gap
        """Queries a gap gets per round (each is searched on every type)."""

    async def plan(self, question: str, budget: Budget) -> tuple[list[Part], str]:
        return plan_question(question, self.max_parts), "builtin"

    async def gaps(self, question: str, part: str, found: Sequence[ResultItem],
                   tried: Sequence[str], budget: Budget) -> list[str]:
        """The first :attr:`per_gap` queries not searched yet, in this order: the
        part's content words with the name its references bring up most, the content
        words alone, each of the part's phrases alone (see :func:`phrases`), the words
        with the second name."""
        words = content_words(part)
        if not words:
            return []
        keywords = _glue(words)
        names = _names(found, words, question)[:2]
        candidates = [f"{keywords} {name}" for name in names[:1]]
        candidates.append(keywords)
        candidates += [_glue(p) for p in phrases(part) if len(p) < len(words)]
        candidates += [f"{keywords} {name}" for name in names[1:]]
        tried_norm = {_norm(t) for t in tried}
        fresh = [c for c in dict.fromkeys(candidates) if _norm(c) not in tried_norm]
        return fresh[:self.per_gap]


def phrases(text: str) -> list[list[str]]:
    """The runs of content words of ``text`` between its function words and marks, in
    order ("Which media types does the store sell" → media types; store sell): the
    noun phrase a wh-word asks about comes first. A search for all the words at once
    can fail where one phrase alone succeeds (a database search that matches "media
    types" to a table, "store sell" to nothing, and the two together to nothing)."""
    runs: list[list[str]] = [[]]
    for token in _tokens(text):
        if token[0].isalnum() and token.lower() not in _STOP:
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


def _glue(words: Sequence[str]) -> str:
    sep = "" if all(not classify(w).spaced for w in words) else " "
    return sep.join(words)


def _norm(query: str) -> str:
    return " ".join(query.casefold().split())

def _names(found: Sequence[ResultItem], words: Sequence[str], question: str) -> list[str]:
    """Names (capitalised runs) in the references that mention one of ``words``, those
    adding most words to the part's first (then the most frequent), leaving out those
    the question already holds. A run's leading function words go ("The Result" →
    "Result"), and a one-word run that the same references also write in lower case is
    an ordinary word that began a sentence, not a name."""
    lowered = {w.lower() for w in words}
    counts = _name_counts(found, lowered, question.casefold())

    def new_words(name: str) -> int:  # what the name adds to the part's own words
        return sum(w.lower() not in lowered for w in name.split())

    ranked = sorted(counts, key=lambda n: (-new_words(n), -counts[n]))
    return ranked[:4]


def _name_counts(found: Sequence[ResultItem], lowered: set[str], asked: str
                 ) -> Counter[str]:
    """How often each name occurs in the references that mention one of the ``lowered``
    words, but for a one-word name those references also write in lower case."""
    counts: Counter[str] = Counter()
    plain: set[str] = set()  # words the references write in lower case
    for item in found:
        text = f"{item.title or ''}. {item.content}"[:4000]
        tokens = _tokens(text)
        if lowered & {t.lower() for t in tokens}:
            plain.update(t for t in tokens if t.islower())
            counts.update(_names_in(text, asked))
    for name in [n for n in counts if " " not in n and n.lower() in plain]:
        del counts[name]
    return counts


def _names_in(text: str, asked: str) -> list[str]:
    """The capitalised runs of ``text`` without their leading function words, of three
    characters or more, that the (case-folded) question ``asked`` does not hold."""
    names = (_without_leading_stops(m.group(0)) for m in _NAME.finditer(text))
    return [n for n in names if len(n) >= 3 and n.casefold() not in asked]


def _without_leading_stops(name: str) -> str:
    words = name.split()
    while words and words[0].lower() in _STOP:
        words.pop(0)
    return " ".join(words)


class LLMPlanner:
    """Plan and gap queries by an OpenAI-compatible chat model (``research.llm_url``,
    ``research.llm_model``), each call bounded by ``research.llm_timeout`` and the run's
    deadline, and counted against ``research.max_llm_calls``; the builtin planner
    answers whenever the model does not (and the run says why)."""

    def __init__(self, settings: ResearchConfig) -> None:
        self.settings = settings
        self.builtin = BuiltinPlanner(settings.max_parts)
        self.failure: str | None = None

    async def plan(self, question: str, budget: Budget) -> tuple[list[Part], str]:
        reply = await self._ask({"task": "plan", "question": question,
                                 "max_parts": self.settings.max_parts,
                                 "answer": 'JSON {"parts": ["one self-contained search '
                                           'query per part of the question", ...]}'},
                                budget)
        parts = _strings(reply, "parts", self.settings.max_parts)
        if parts:
            return [Part(p) for p in parts], "llm"
        why = self.failure or "its plan was not a list of parts"
        builtin, _ = await self.builtin.plan(question, budget)
        return builtin, f"builtin (llm: {why})"

    async def gaps(self, question: str, part: str, found: Sequence[ResultItem],
                   tried: Sequence[str], budget: Budget) -> list[str]:
        seen = [{"title": i.title, "content": i.content[:300]} for i in found[:5]]
        reply = await self._ask({"task": "gaps", "question": question, "part": part,
                                 "searched": list(tried), "found": seen,
                                 "answer": 'JSON {"queries": ["a new search query", ...]}'},
                                budget)
        queries = _strings(reply, "queries", 2)
        if queries:
            return queries
        return await self.builtin.gaps(question, part, found, tried, budget)

    async def _ask(self, task: dict[str, Any], budget: Budget) -> Any:
        """The model's JSON answer to ``task``, or None (``failure`` says why)."""
        from agent_search._assembly import chat_client
        from agent_search.errors import RunError

        s = self.settings
        if not s.llm_url or not s.llm_model:
            self.failure = "research.llm_url and research.llm_model are not set"
            return None
        if not budget.take():
            self.failure = "the LLM-call budget or the deadline is spent"
            return None
        seconds = max(0.01, min(float(s.llm_timeout), budget.seconds_left))
        client = chat_client()("research", base_url=s.llm_url, model=s.llm_model,
                               api_key_env=s.llm_api_key_env, timeout=seconds)
        messages = [{"role": "system", "content": "You plan web, knowledge-base and "
                     "database searches. Answer with the JSON asked for, nothing else."},
                    {"role": "user", "content": json.dumps(task, ensure_ascii=False)}]
        text = ""
        try:
            with anyio.move_on_after(seconds) as scope:
                async for event in client.stream_chat(messages):
                    if event.kind == "text":
                        text += event.text
                    if len(text) > 20_000:
                        break
            if scope.cancelled_caught:
                self.failure = f"no answer within {seconds:.1f}s"
                return None
        except RunError as exc:  # the endpoint failed (the client's LLMError)
            self.failure = str(exc)
            return None
        finally:
            await client.aclose()
        try:
            return parse_json_answer(text, kinds=(dict,))
        except NoJSONAnswer:
            self.failure = "its answer held no JSON object"
            return None


def _strings(reply: Any, key: str, limit: int) -> list[str]:
    """``reply[key]`` as a list of usable queries (non-empty strings, bounded), else []."""
    values = reply.get(key) if isinstance(reply, dict) else None
    if not isinstance(values, list):
        return []
    out = [" ".join(v.split())[:MAX_QUERY_CHARS] for v in values
           if isinstance(v, str) and content_words(v)]
    return list(dict.fromkeys(out))[:limit]
