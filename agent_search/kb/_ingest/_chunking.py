"""Splitting documents into chunks that fit the embedding model.

Chunks follow the document's structure: a chunk never spans two sections (heading paths),
paragraphs are kept whole when they fit, a long paragraph is cut at sentence ends, and a
sentence longer than a chunk is cut by words (a "word" longer than half a chunk, e.g. CJK
text without spaces or a run of garbage, by characters). Consecutive chunks of one section
share up to ``overlap`` tokens (whole sentences where possible) so a passage cut at a
boundary is still found. Sizes are counted with the embedding model's own tokenizer.

Chinese and Japanese: sentences end at full-width 。！？； and ……, a sentence over a chunk
is cut after its clause marks (，、：) before it is cut by characters, and full-width
digits and Latin letters (２０２３, ＧＤＰ) are stored as their ASCII forms, the same
characters in another width (Unicode's compatibility forms): the BERT vocabulary of the
default model has no entry for them, and a reader loses nothing. Chunk sizes are counted
in the model's own tokens, so a Chinese chunk holds what the model reads (the default
model's tokenizer gives one token per Han character; multilingual-e5 about 1.6
characters a token), not a share of an English one; without a tokenizer
(:func:`approx_tokens`) a Han or kana character counts as one token.

Bounded and linear: the document's blocks are consumed lazily and chunks come out as they
are complete, so memory holds one section's current chunk and one counting batch, never
the document. Every character is passed to the token counter at most three times (block,
sentence, word group), and a chunk is also capped in characters (``max_chars``, default
:data:`CHARS_PER_TOKEN` × ``max_tokens``): a word the tokenizer maps to one unknown token
cannot make a chunk of megabytes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from agent_search.kb._ingest._loaders import PARAGRAPH_CHARS, Block, Document, _cut, glue
from agent_search.kb._ingest._markdown import Fence, code_block
from agent_search.language import CJK_CHAR, HAN

TokenCounter = Callable[[Sequence[str]], list[int]]

CHARS_PER_TOKEN = 12
"""Character cap of a chunk per token of ``max_tokens`` (English averages about 4.5)."""
COUNT_BATCH_CHARS = 1 << 16
"""Blocks are counted in batches of about this many characters (one tokenizer call)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CJK_SENTENCE_END = re.compile(
    r"(?:[。！？；]+|…{2,}|[!?]+(?=[" + HAN + r"]))[”’」』）》】〕〉\"']*")
"""A sentence of Chinese or Japanese ends at full-width 。！？； or an ellipsis ……, with
the closing quotes and brackets after it (they belong to the sentence they close), and
at a half-width ! or ? right before a Han character (好吗?是的。: no space to split at)."""
_CJK_CLAUSE_END = re.compile(r"[，、：,]")

_Piece = tuple[str, int, bool]  # text, tokens, starts a paragraph
_HALF_WIDTH = str.maketrans(
    {**{chr(0xFF10 + i): chr(0x30 + i) for i in range(10)},
     **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
     **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)}, "％": "%"})
"""Full-width digits, Latin letters and ％ to ASCII: one character for one."""
_CJK_CHAR = CJK_CHAR


@dataclass(slots=True)
class Chunk:
    doc_id: str
    index: int
    text: str
    headings: tuple[str, ...]
    page: int | None


def approx_tokens(texts: Sequence[str]) -> list[int]:
    """A tokenizer-free estimate for when no tokenizer is at hand (an embedding endpoint):
    ≈ 1.3 tokens per word, and one per Han, kana or Hangul character, as the subword
    vocabularies of multilingual models count them, give or take half (Chinese text has no
    spaces: counted by words, a page of it would be a few tokens)."""
    out = []
    for t in texts:
        cjk = len(_CJK_CHAR.findall(t))
        rest = _CJK_CHAR.sub(" ", t) if cjk else t
        out.append(cjk + int(len(rest.split()) * 1.3) + 1)
    return out


CHUNKER = 2
"""The version of the chunking rules, recorded in a collection's metadata: a collection
chunked by another version is re-chunked by the next ingest of its files (the report
says so). 2: the title and heading path embedded with a chunk count against the model's
window."""
SPECIAL_TOKENS = 2
"""Tokens the model adds to every input (BERT's [CLS] and [SEP])."""


def embedded_prefix(title: str | None, headings: Sequence[str]) -> str:
    """What is embedded before a chunk's text: its document title and heading path give
    the chunk the context a reader would have (one line each, when there is one)."""
    return "\n".join(p for p in (title, " > ".join(headings)) if p)


def chunk_document(doc: Document, count: TokenCounter, *, max_tokens: int = 256,
                   overlap: int = 32, max_chars: int | None = None,
                   window: int | None = None) -> list[Chunk]:
    """The chunks of ``doc`` in reading order, numbered from 0."""
    return list(iter_chunks(doc, count, max_tokens=max_tokens, overlap=overlap,
                            max_chars=max_chars, window=window))


def iter_chunks(doc: Document, count: TokenCounter, *, max_tokens: int = 256,
                overlap: int = 32, max_chars: int | None = None,
                window: int | None = None) -> Iterator[Chunk]:
    """The chunks of ``doc`` in reading order, numbered from 0, produced lazily.

    ``window``: the model's input window in its tokens (None: no model; only
    ``max_tokens`` bounds a chunk). With one, a chunk is also cut so that what is
    embedded — title, heading path, text and the model's own tokens — fits it: the end
    of a longer input is never read by the model, so it would be stored but never found.
    A heading path too long to leave a quarter of the window is not given more room."""
    limit = max_chars or CHARS_PER_TOKEN * max_tokens
    index = 0
    sections = itertools.groupby(doc.blocks, key=lambda b: (b.headings, b.page))
    for (headings, page), blocks in sections:
        budget = max_tokens
        if window is not None:
            prefix = embedded_prefix(doc.title, headings)
            used = SPECIAL_TOKENS + (count([prefix])[0] if prefix else 0)
            budget = max(min(max_tokens, window - used), max(8, window // 4))
        share = min(overlap, budget // 2)
        pieces = _pieces(blocks, count, budget, limit)
        for text in _pack(pieces, budget, share, limit):
            yield Chunk(doc.doc_id, index, text, headings, page)
            index += 1


def _texts(blocks: Iterable[Block]) -> Iterator[str]:
    """Non-empty block texts, a text longer than :data:`PARAGRAPH_CHARS` cut in pieces
    (loaders already bound their blocks; documents built by callers may not). A code
    block is left whole: :func:`_code_parts` cuts it on line boundaries."""
    for block in blocks:
        text = block.text.translate(_HALF_WIDTH)
        if code_block(text) is not None:
            yield text
            continue
        while len(text) > PARAGRAPH_CHARS:
            head, text = _cut(text, PARAGRAPH_CHARS)
            if head.strip():
                yield head
        if text.strip():
            yield text


def _batches(texts: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= COUNT_BATCH_CHARS or len(batch) >= 256:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _pieces(blocks: Iterable[Block], count: TokenCounter, max_tokens: int,
            max_chars: int) -> Iterator[_Piece]:
    """(text, tokens, starts_paragraph) units within ``max_tokens`` and ``max_chars``."""
    for batch in _batches(_texts(blocks)):
        for text, n in zip(batch, count(batch), strict=True):
            if n <= max_tokens and len(text) <= max_chars:
                yield text, n, True
                continue
            code = code_block(text)
            if code is not None:
                for part, m in _code_parts(*code, count, max_tokens, max_chars):
                    yield part, m, True
                continue
            sentences = sentences_of(text)
            counts = [n] if sentences == [text] else count(sentences)
            first = True
            for sent, m in zip(sentences, counts, strict=True):
                if m <= max_tokens and len(sent) <= max_chars:
                    yield sent, m, first
                else:
                    for i, (part, c) in enumerate(
                            _split_long(sent, m, count, max_tokens, max_chars)):
                        yield part, c, first and i == 0
                first = False


def sentences_of(text: str) -> list[str]:
    """The sentences of a paragraph: cut after ``.!?`` and a space, and after a full-width
    sentence end (Chinese and Japanese put no space there)."""
    out: list[str] = []
    for part in _SENTENCE_END.split(text):
        start = 0
        for m in _CJK_SENTENCE_END.finditer(part):
            out.append(part[start:m.end()])
            start = m.end()
        out.append(part[start:])
    return [s.strip() for s in out if s.strip()]


def _split_long(text: str, tokens: int, count: TokenCounter, max_tokens: int,
                max_chars: int) -> list[tuple[str, int]]:
    """Cut a sentence that is over a chunk into parts within both caps: groups of words
    sized by the sentence's tokens per character; a word longer than half a chunk (Chinese
    has no spaces; or garbage the tokenizer calls one unknown token) is cut after its
    clause marks (，、：), then by characters, and a
    group that still counts too many tokens is cut by characters (a token is at least one
    character, so ``max_tokens // 2`` characters are always within ``max_tokens``)."""
    hard = max(1, min(max_tokens // 2, max_chars))
    atoms: list[str] = []
    for word in text.split():
        for clause in _clauses(word, hard):
            atoms.extend(clause[i:i + hard] for i in range(0, len(clause), hard))
    per_char = max(1, tokens) / max(1, sum(len(a) for a in atoms))
    budget = max_tokens * 0.9
    groups: list[str] = []
    current: list[str] = []
    chars = 0
    for atom in atoms:
        if current and ((chars + len(atom)) * per_char > budget
                        or chars + 1 + len(atom) > max_chars):
            groups.append(glue(current))
            current, chars = [], 0
        current.append(atom)
        chars += len(atom) + (1 if chars else 0)
    if current:
        groups.append(glue(current))
    out: list[tuple[str, int]] = []
    for group, n in zip(groups, count(groups), strict=True):
        if n <= max_tokens:
            out.append((group, n))
            continue
        parts = [group[i:i + hard] for i in range(0, len(group), hard)]
        out.extend(zip(parts, count(parts), strict=True))
    return out


def _code_parts(fence: Fence, lines: list[str], count: TokenCounter, max_tokens: int,
                max_chars: int) -> list[tuple[str, int]]:
    """A code block over a chunk, cut on line boundaries into blocks within both caps,
    each closed and the next reopened with the fence's opening line (its info string), so
    every part is code as its reader wrote it. A line longer than a part is cut by
    characters (the last resort, as for prose)."""
    frame = [fence.opening, fence.closing]
    frame_tokens = sum(count(frame))
    frame_chars = sum(len(f) + 1 for f in frame)
    budget = max(1, int(max_tokens * 0.9) - frame_tokens)
    room = max(1, max_chars - frame_chars)
    hard = max(1, min(max_tokens // 2, room))
    pieces: list[tuple[str, int]] = []
    for batch in _batches(lines):
        for line, n in zip(batch, count(batch), strict=True):
            if n <= budget and len(line) <= room:
                pieces.append((line, n))
            else:
                cut = [line[i:i + hard] for i in range(0, len(line), hard)]
                pieces.extend(zip(cut, count(cut), strict=True))
    parts: list[list[str]] = []
    current: list[str] = []
    tokens = chars = 0
    for piece, n in pieces:
        if current and (tokens + n > budget or chars + len(piece) + 1 > room):
            parts.append(current)
            current, tokens, chars = [], 0, 0
        current.append(piece)
        tokens += n
        chars += len(piece) + 1
    if current:
        parts.append(current)
    texts = ["\n".join([fence.opening, *part, fence.closing]) for part in parts]
    return list(zip(texts, count(texts), strict=True))


def _clauses(word: str, hard: int) -> list[str]:
    """A word too long for a chunk part (Chinese has no spaces) cut after its clause
    marks (，、：) first, so a cut by characters is the last resort."""
    if len(word) <= hard:
        return [word]
    out: list[str] = []
    start = 0
    for m in _CJK_CLAUSE_END.finditer(word):
        out.append(word[start:m.end()])
        start = m.end()
    out.append(word[start:])
    return [c for c in out if c]


def _pack(pieces: Iterable[_Piece], max_tokens: int, overlap: int,
          max_chars: int) -> Iterator[str]:
    current: list[_Piece] = []
    size = 0
    chars = 0
    for piece in pieces:
        if current and (size + piece[1] > max_tokens
                        or chars + 2 + len(piece[0]) > max_chars):
            yield _join(current)
            carried: list[_Piece] = []
            carried_size = 0
            carried_chars = 0
            for prev in reversed(current):
                if carried_size + prev[1] > overlap \
                        or carried_chars + len(prev[0]) > max_chars // 2:
                    break
                carried.insert(0, prev)
                carried_size += prev[1]
                carried_chars += len(prev[0]) + 2
            if carried_size + piece[1] > max_tokens \
                    or carried_chars + len(piece[0]) > max_chars:
                carried, carried_size, carried_chars = [], 0, 0
            current, size, chars = carried, carried_size, carried_chars
        current.append(piece)
        size += piece[1]
        chars += len(piece[0]) + 2
    if current:
        yield _join(current)


def _join(pieces: list[_Piece]) -> str:
    parts: list[str] = []
    for text, _, starts_paragraph in pieces:
        if parts:
            if starts_paragraph:
                parts.append("\n\n")
            elif glue((parts[-1], text)) != parts[-1] + text:
                parts.append(" ")
        parts.append(text)
    return "".join(parts)
