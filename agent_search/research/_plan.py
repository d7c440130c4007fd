"""The builtin planner: a question's parts from its structure, without a model.

A question asks several things in a few ways, and each is a matter of grammar, not of
subject: several sentences; clauses joined by a coordinator ("How many albums does the
store have and what is its refund policy?"); one frame applied to coordinated names
("Do Qdrant and Milvus support sparse vectors?", "Qdrant or Milvus", "both A and B",
"A, B and C", "A 和 B 的许可证"). The parse:

1. sentences (one part each, at least);
2. in a sentence, the coordinators at the top level: the conjunctions of English and
   Chinese grammar (a closed class, :data:`COORDINATORS`), and commas or 、 inside a list
   that ends in one of them;
3. the conjuncts: the left one is the run of content words (not stop words) that ends
   the segment before the coordinator; the right one is as long, from the start of the
   segment after it. When the segment after starts with a function word ("... and
   *what* is ...") the coordination joins clauses: each clause is a part as it stands;
   otherwise the sentence is a frame around the conjuncts, and each conjunct put in the
   frame is a part ("Do Qdrant support sparse vectors?" reads fine to a search engine).

Correlatives ("both", "either", "whether", "between"; 既, 无论) before the first conjunct
are dropped from the frame. A question with none of this is one part: itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_search.language import CHINESE, ENGLISH, classify, sentence_breaks

MAX_PARTS = 8
"""Parts of one question at most (the rest are left to the whole question's search)."""

COORDINATORS: frozenset[str] = frozenset({
    "and", "or", "nor", "but", "versus", "vs", "vs.", "plus", "&",
    "和", "与", "及", "以及", "或", "或者", "还是", "跟", "并且", "而且", "同",
})
"""The coordinating conjunctions of English and Chinese grammar (a closed class)."""

PHRASAL = (("as", "well", "as"), ("along", "with"), ("as", "opposed", "to"))
"""Coordinators written in several words."""

CORRELATIVES: frozenset[str] = frozenset({"both", "either", "neither", "whether", "between",
                                          "既", "无论", "不论"})
"""The first halves of correlative pairs ("both A and B"): not part of a conjunct."""

LIST_MARKS = frozenset({",", "、", "，"})
SEPARATORS = frozenset({";", "；"})
_STOP = ENGLISH.stopwords | CHINESE.stopwords
"""English words inside a Chinese question are read too (and the other way round)."""
_MAX_CONJUNCT = 4


@dataclass(frozen=True, slots=True)
class Part:
    """One thing the question asks, as a search query."""

    text: str


def plan_question(question: str, max_parts: int = MAX_PARTS) -> list[Part]:
    """The parts of ``question`` (see the module); one part, the question, when it has
    no structure to split; none when it has no words."""
    text = " ".join(question.split())
    if not _has_content(text):
        return []
    parts: list[str] = []
    for sentence in _sentences(text):
        for clause in _split_separators(sentence):
            parts.extend(_parts_of(clause))
    unique = list(dict.fromkeys(p for p in (_tidy(p) for p in parts) if _has_content(p)))
    return [Part(p) for p in unique[:max_parts]] or [Part(text)]


def _sentences(text: str) -> list[str]:
    return [s for s in (s.strip() for s in sentence_breaks().split(text)) if s]


def _split_separators(sentence: str) -> list[list[str]]:
    """The sentence's tokens, cut at semicolons (each piece stands alone)."""
    tokens = _tokens(sentence)
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [t for t in out if t]


def _tokens(text: str) -> list[str]:
    """The tokens of ``text`` by its language's tokenizer (classified once)."""
    return classify(text).tokenize(text)


def _coordinator_at(tokens: list[str], i: int) -> int:
    """The number of tokens of a coordinator starting at ``i`` (0: none)."""
    word = tokens[i].lower()
    if word in COORDINATORS:
        return 1
    for phrase in PHRASAL:
        n = len(phrase)
        if tuple(t.lower() for t in tokens[i:i + n]) == phrase:
            return n
    return 0


def _segments(tokens: list[str]) -> list[list[str]]:
    """The tokens between top-level coordinators; list commas count when the list ends
    in a coordinator and the pieces between them are short (a list of names), never a
    comma after a clause ("In the docs, what ...")."""
    cuts = _coordinator_cuts(tokens)
    if not cuts:
        return [tokens]
    last = cuts[-1][0]
    commas = [(i, 1) for i, t in enumerate(tokens[:last]) if t in LIST_MARKS]
    return _cut(tokens, sorted(_list_commas(commas, cuts) + cuts))


def _coordinator_cuts(tokens: list[str]) -> list[tuple[int, int]]:
    """(position, length in tokens) of each coordinator with tokens on both sides."""
    return [(i, n) for i in range(len(tokens))
            if (n := _coordinator_at(tokens, i)) and 0 < i < len(tokens) - n]


def _cut(tokens: list[str], marks: list[tuple[int, int]]) -> list[list[str]]:
    """The non-empty pieces of ``tokens`` between ``marks`` (position, length)."""
    out, start = [], 0
    for i, n in marks:
        out.append(tokens[start:i])
        start = i + n
    out.append(tokens[start:])
    return [s for s in out if s]


def _list_commas(commas: list[tuple[int, int]], cuts: list[tuple[int, int]]
                 ) -> list[tuple[int, int]]:
    """The commas that separate items of a list: each piece from one to the next mark
    (comma or coordinator) holds at most a conjunct's length of tokens."""
    kept: list[tuple[int, int]] = []
    marks = sorted(commas + cuts)
    for k, (i, _) in enumerate(marks[:-1]):
        if (i, 1) in commas and marks[k + 1][0] - i - 1 <= _MAX_CONJUNCT:
            kept.append((i, 1))
    return kept


def _content_run_end(tokens: list[str]) -> int:
    """How many tokens at the end of ``tokens`` are content words (a conjunct's end)."""
    n = 0
    for token in reversed(tokens):
        if _is_stop(token) or not token[0].isalnum():
            break
        n += 1
    return min(n, _MAX_CONJUNCT)


def _content_run_start(tokens: list[str]) -> int:
    n = 0
    for token in tokens:
        if _is_stop(token) or not token[0].isalnum():
            break
        n += 1
    return n


def _parts_of(tokens: list[str]) -> list[str]:
    segments = _segments(tokens)
    if len(segments) == 1:
        return [_join(tokens)]
    first, last = segments[0], segments[-1]
    left = _content_run_end(first)
    right = min(left, _content_run_start(last))
    if left == 0 or right == 0 or not _middle_names(segments):
        # clauses (or a list we cannot read as names): each segment as it stands
        return [_join(s) for s in segments]
    head = [t for t in first[:len(first) - left] if t.lower() not in CORRELATIVES]
    tail = last[right:]
    conjuncts = [first[len(first) - left:], *segments[1:-1], last[:right]]
    return [_join(head + c + tail) for c in conjuncts]


def _middle_names(segments: list[list[str]]) -> bool:
    """Whether every segment between the first and the last is a short run of content
    words (a name of a list "A, B and C"), not a clause."""
    return all(len(s) <= _MAX_CONJUNCT and _content_run_start(s) == len(s)
               for s in segments[1:-1])


def _is_stop(token: str) -> bool:
    return token.lower() in _STOP or token.lower() in CORRELATIVES


def _join(tokens: list[str]) -> str:
    out = ""
    for token in tokens:
        glue = "" if not out or _unspaced(out[-1], token) \
            or (not token[0].isalnum() and token not in "&(") else " "
        out += glue + token
    return out


def _unspaced(before: str, token: str) -> bool:
    """Whether ``token`` is written straight after ``before``: both in one language
    written without spaces (two Chinese words)."""
    language = classify(token)
    return not language.spaced and language.script is not None \
        and language.script.match(token) is not None \
        and language.script.search(before[-1]) is not None


def _tidy(text: str) -> str:
    return text.strip(" ,、，")


def _has_content(text: str) -> bool:
    return any(not _is_stop(t) and t[0].isalnum() for t in _tokens(text))
