"""Splitting documents into chunks that fit the embedding model.

Chunks follow the document's structure: a chunk never spans two sections (heading paths),
paragraphs are kept whole when they fit, a long paragraph is cut at sentence ends, and a
sentence longer than a chunk is cut by tokens. Consecutive chunks of one section share up
to ``overlap`` tokens (whole sentences where possible) so a passage cut at a boundary is
still found. Sizes are counted with the embedding model's own tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_search.kb.loaders import Block, Document

TokenCounter = Callable[[Sequence[str]], list[int]]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


@dataclass(slots=True)
class Chunk:
    doc_id: str
    index: int
    text: str
    headings: tuple[str, ...]
    page: int | None


def approx_tokens(texts: Sequence[str]) -> list[int]:
    """A tokenizer-free estimate (≈ 1.3 tokens per word) for when no tokenizer is at hand."""
    return [int(len(t.split()) * 1.3) + 1 for t in texts]


def chunk_document(doc: Document, count: TokenCounter, *, max_tokens: int = 256,
                   overlap: int = 32) -> list[Chunk]:
    """The chunks of ``doc`` in reading order, numbered from 0."""
    chunks: list[Chunk] = []
    sections: list[list[Block]] = []
    for block in doc.blocks:
        if sections and sections[-1][0].headings == block.headings \
                and sections[-1][0].page == block.page:
            sections[-1].append(block)
        else:
            sections.append([block])
    for section in sections:
        pieces = _pieces(section, count, max_tokens)
        for text in _pack(pieces, max_tokens, overlap):
            chunks.append(Chunk(doc.doc_id, len(chunks), text, section[0].headings,
                                section[0].page))
    return chunks


def _pieces(section: list[Block], count: TokenCounter,
            max_tokens: int) -> list[tuple[str, int, bool]]:
    """(text, tokens, starts_paragraph) units no longer than ``max_tokens``."""
    texts = [b.text for b in section if b.text.strip()]
    out: list[tuple[str, int, bool]] = []
    for text, n in zip(texts, count(texts), strict=True):
        if n <= max_tokens:
            out.append((text, n, True))
            continue
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        first = True
        for sent, m in zip(sentences, count(sentences), strict=True):
            if m <= max_tokens:
                out.append((sent, m, first))
            else:
                out.extend((w, c, first and i == 0) for i, (w, c)
                           in enumerate(_split_words(sent, count, max_tokens)))
            first = False
    return out


def _split_words(text: str, count: TokenCounter, max_tokens: int) -> list[tuple[str, int]]:
    words = text.split()
    if len(words) <= 1:  # one huge "word" (e.g. CJK text without spaces): cut characters
        step = max(1, max_tokens // 2)
        parts = [text[i:i + step] for i in range(0, len(text), step)]
        return list(zip(parts, count(parts), strict=True))
    per_word = max(1, count([text])[0]) / len(words)
    step = max(1, int(max_tokens / per_word * 0.9))
    parts = [" ".join(words[i:i + step]) for i in range(0, len(words), step)]
    return list(zip(parts, count(parts), strict=True))


def _pack(pieces: list[tuple[str, int, bool]], max_tokens: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    current: list[tuple[str, int, bool]] = []
    size = 0
    for piece in pieces:
        if current and size + piece[1] > max_tokens:
            chunks.append(_join(current))
            carried: list[tuple[str, int, bool]] = []
            carried_size = 0
            for prev in reversed(current):
                if carried_size + prev[1] > overlap:
                    break
                carried.insert(0, prev)
                carried_size += prev[1]
            if carried_size + piece[1] > max_tokens:
                carried, carried_size = [], 0
            current, size = carried, carried_size
        current.append(piece)
        size += piece[1]
    if current:
        chunks.append(_join(current))
    return chunks


def _join(pieces: list[tuple[str, int, bool]]) -> str:
    out = ""
    for text, _, starts_paragraph in pieces:
        if not out:
            out = text
        else:
            out += ("\n\n" if starts_paragraph else " ") + text
    return out
