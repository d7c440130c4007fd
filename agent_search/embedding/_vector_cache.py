"""Texts' vectors kept for reuse: a bounded, thread-safe cache in front of an embed
function.

Short texts that recur across calls — the words the grounding aligns by meaning, the
heading paths of a collection's chunks — are embedded once and read again from here. A
cache serves several models by scope (a model's id): a text embedded by one model is
never answered for another.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

Embed = Callable[[Sequence[str]], NDArray[np.float32]]
"""Texts → one row each, in order."""


class VectorCache:
    """(scope, text) → row, the oldest entries dropped past ``size`` of them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._rows: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def texts(self, scope: str = "") -> list[str]:
        """The texts kept for ``scope``, oldest first."""
        with self._lock:
            return [text for s, text in self._rows if s == scope]

    def get(self, embed: Embed, texts: Sequence[str], scope: str = "") -> NDArray[np.float32]:
        """One row per text, in order; those not kept embedded by ``embed`` in one call
        (without the lock: other threads read meanwhile)."""
        keys = [(scope, t) for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        if missing:
            found = np.asarray(embed([text for _, text in missing]), dtype=np.float32)
            with self._lock:
                for key, row in zip(missing, found, strict=True):
                    self._rows[key] = row
                    self._rows.move_to_end(key)
                while len(self._rows) > self._size:
                    self._rows.popitem(last=False)
        with self._lock:
            rows = [self._rows.get(k) for k in keys]
        if any(r is None for r in rows):  # evicted meanwhile by another thread: embed again
            return np.asarray(embed(list(texts)), dtype=np.float32)
        return np.stack([r for r in rows if r is not None])
