"""How the last user turn of a conversation is searched: the one place every surface
(``stream()``, the HTTP chat, MCP, the page, ``ask``) reads a follow-up, since they all
run an assistant's stream with the caller's ``messages``.

The builtin reading (:mod:`agent_search.query.followup`): text searches (kb, web) get the
last turn alone, or with the previous question's topic when it cannot stand alone; a
database search gets the last turn and the earlier user turns (``options.history``), and
its handler reads the follow-up against the previous turn's query.

With an LLM (the assistant's connector, and ``rewrite.enabled`` in ``agent.yml``), a
history-aware rewrite of the last turn into a whole question runs first, within
``rewrite.timeout`` seconds. The rewrite is searched alone by every type when it keeps to
the conversation: every word of it that says what it is about (outside the stop word
lists) appears in the conversation (the user's turns or the assistant's answers, which may
name what a pronoun stands for), and it keeps a word of the last turn.
A rewrite that brings its own topic, fails, stalls or answers nothing falls back to the
builtin reading, with a warning in the record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import anyio

from agent_search.agent._conversation import Message, message_text
from agent_search.agent.llm import ChatClient, LLMError, completion_text
from agent_search.query.followup import MAX_EARLIER_TURNS, MAX_TURN_CHARS, own_words, read_text

MAX_REWRITE_CHARS = 500
MAX_ANSWER_CHARS = 4_000
_REWRITE_PROMPT = (
    "Rewrite the user's last message as one whole question that can be understood "
    "without the conversation: replace pronouns and ellipses with what they refer to in "
    "the earlier user messages. If the last message already stands alone, repeat it "
    "unchanged. Do not answer it and do not add anything. Reply with the question only.")


@dataclass(slots=True)
class Reading:
    """How a conversation's last turn is searched: ``query`` for text searches,
    ``earlier`` user turns for searches that read follow-ups themselves (db), and ``how``
    it was read, for the record."""

    query: str
    last: str = ""
    earlier: list[str] = field(default_factory=list)
    how: str = "first turn"
    warnings: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {"how": self.how, "query": self.query, "last": self.last,
                "earlier": list(self.earlier)}


def user_turns(messages: Sequence[Message]) -> list[str]:
    texts = [message_text(m).strip() for m in messages if m.get("role") == "user"]
    return [t for t in texts if t]


def read_conversation(messages: Sequence[Message]) -> Reading:
    """The builtin reading of ``messages`` (see the module docstring)."""
    turns = user_turns(messages)
    if not turns:
        return Reading("", how="empty")
    text = read_text(turns)
    earlier = [t[:MAX_TURN_CHARS] for t in turns[:-1]][-MAX_EARLIER_TURNS:]
    return Reading(text.query, last=turns[-1], earlier=earlier, how=text.how)


@lru_cache(maxsize=1)
def _stem() -> Callable[[str], str]:
    """English Snowball stems (``py_rust_stemmers``, which the embedding package brings),
    else the word itself."""
    try:
        import py_rust_stemmers  # type: ignore[import-untyped]
    except ImportError:
        return lambda w: w
    stemmer = py_rust_stemmers.SnowballStemmer("english")
    return lambda w: str(stemmer.stem_word(w))


def _stems(text: str) -> set[str]:
    stem = _stem()
    return {stem(w) for w in own_words(text)}


def _among(stem: str, stems: set[str]) -> bool:
    """``stem`` is one of ``stems``, or one is the start of the other ("async" and
    "asynchron")."""
    return any(stem == s or (min(len(stem), len(s)) >= 4
                             and (stem.startswith(s) or s.startswith(stem))) for s in stems)


def keeps_to(rewrite: str, turns: Sequence[str], answers: Sequence[str] = ()) -> str | None:
    """Why ``rewrite`` does not keep to the conversation of user ``turns`` (and the
    assistant's ``answers``, which may name what a pronoun stands for), or None. Words
    are compared by their stems."""
    said = {s for t in [*turns, *answers] for s in _stems(t)}
    stem = _stem()
    new = [w for w in own_words(rewrite) if not _among(stem(w), said)]
    if new:
        return "brings words the conversation did not use: " + ", ".join(new[:5])
    last = _stems(turns[-1])
    rewritten = _stems(rewrite)
    if last and not any(_among(s, rewritten) for s in last):
        return "drops every word of the last question"
    return None


async def rewrite_conversation(client: ChatClient, messages: Sequence[Message],
                               timeout: float) -> Reading:
    """The reading of ``messages`` after an LLM rewrite of the last turn, or the builtin
    reading with a warning saying why the rewrite was not used. Never raises for the
    model's failures; at most ``timeout`` seconds."""
    builtin = read_conversation(messages)
    turns = user_turns(messages)
    if len(turns) < 2:
        return builtin
    conversation = "\n".join(f"{m.get('role')}: {message_text(m).strip()[:MAX_TURN_CHARS]}"
                             for m in messages[-2 * MAX_EARLIER_TURNS - 1:]
                             if m.get("role") in ("user", "assistant"))
    prompt = [{"role": "system", "content": _REWRITE_PROMPT},
              {"role": "user", "content": conversation}]
    try:
        with anyio.fail_after(timeout):
            answer = await completion_text(client, prompt)
    except TimeoutError:
        return _fallback(builtin, f"gave no question within {timeout:g} s")
    except LLMError as exc:
        return _fallback(builtin, f"failed: {exc}")
    text = " ".join(answer.split()).strip().strip('"')[:MAX_REWRITE_CHARS]
    if not text:
        return _fallback(builtin, "answered nothing")
    answers = [message_text(m)[:MAX_ANSWER_CHARS] for m in messages
               if m.get("role") == "assistant"][-MAX_EARLIER_TURNS:]
    problem = keeps_to(text, turns, answers)
    if problem:
        return _fallback(builtin, f"{problem} ({text[:120]!r})")
    return Reading(text, last=text, earlier=[], how="rewritten by the language model")


def _fallback(builtin: Reading, why: str) -> Reading:
    builtin.warnings.append(f"follow-up rewrite {why}; the builtin reading was used")
    return builtin
