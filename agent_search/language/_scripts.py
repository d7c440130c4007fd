"""The CJK character classes, defined once: which code points are Han, kana and Hangul.

Several readers need them (the sparse terms and the chunker of the knowledge base, the
choice of embedding model, the query's Chinese reader, the grounding's sentence splitter
and its script check). Each of them had its own copy of the ranges, and the copies had
drifted apart (``\\u3400-\\u9fff`` in one, three blocks in another), so a character
counted as Chinese in one place and not in the next. Here they are range strings, to be
put inside a character class (``f"[{HAN}]+"``) or combined (``f"[{KANA}{HAN}]"``), and
the compiled single-character classes most readers want.
"""

from __future__ import annotations

import re

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Han characters: CJK unified ideographs, extension A, compatibility ideographs."""
KANA = "\u3040-\u30ff"
"""The hiragana and katakana blocks, marks included."""
KANA_LETTERS = "\u3040-\u30fa"
"""Kana without U+30FB–U+30FF: the middle dot ・ (which Chinese also writes, in foreign
names), the prolonged sound mark and the iteration marks. For asking "is this Japanese"
of text that may be Chinese."""
HANGUL = "\uac00-\ud7af"
"""Precomposed Hangul syllables (how Korean text is written)."""
HANGUL_JAMO = "\u1100-\u11ff"
"""Conjoining Hangul letters (jamo), which decomposed Korean text is written with."""
CJK = KANA + HAN + HANGUL
"""Chinese, Japanese and Korean writing: scripts written without spaces between words."""

HAN_CHAR = re.compile(f"[{HAN}]")
"""One Han character."""
CJK_CHAR = re.compile(f"[{CJK}]")
"""One kana, Han or Hangul character."""

