"""Finding citation markers in streamed LLM text.

Text arrives in chunks and a marker can be split across them (``"#re"`` + ``"f:12 "``).
:class:`CitationTracker` holds back the shortest tail that could still become a marker,
so what it releases is final: known markers are recorded as used, unknown ones (ids the
LLM invented) recorded as unknown and, with ``remove_unknown``, removed from the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_search.citation import marker_regex

_ID_CHARS = re.compile(r"[A-Za-z0-9_-]*")
_MAX_ID_CHARS = 64


class CitationTracker:
    def __init__(self, known_ids: Iterable[str], fmt: str = "#ref:{id}",
                 remove_unknown: bool = False) -> None:
        self.known = set(known_ids)
        self.remove_unknown = remove_unknown
        marker = marker_regex(fmt)
        # with removal on, whitespace before a marker goes with it ("one #ref:9." → "one.")
        self._regex = re.compile(r"(?P<ws>[ \t]*)" + marker.pattern) if remove_unknown \
            else marker
        self._prefix, _, self._suffix = fmt.partition("{id}")
        self._buffer = ""
        self.used: list[str] = []
        self.unknown: list[str] = []
        self.text = ""
        """All text released so far (after removals)."""

    def feed(self, chunk: str) -> str:
        """Add a chunk; return the text that is now safe to show."""
        self._buffer += chunk
        hold = self._holdback_start(self._buffer)
        ready, self._buffer = self._buffer[:hold], self._buffer[hold:]
        return self._release(ready)

    def flush(self) -> str:
        """End of stream: release whatever is held back."""
        ready, self._buffer = self._buffer, ""
        return self._release(ready)

    def _release(self, text: str) -> str:
        if not text:
            return ""

        def replace(m: re.Match[str]) -> str:
            cid = m.group("id")
            if cid in self.known:
                if cid not in self.used:
                    self.used.append(cid)
                return m.group(0)
            if cid not in self.unknown:
                self.unknown.append(cid)
            return "" if self.remove_unknown else m.group(0)

        out = self._regex.sub(replace, text)
        self.text += out
        return out

    def _holdback_start(self, buf: str) -> int:
        """Index where the possibly-incomplete marker at the end of ``buf`` starts
        (``len(buf)`` when nothing needs holding)."""
        candidate = min(_partial_prefix_start(buf, self._prefix),
                        self._open_marker_start(buf))
        if self.remove_unknown:
            # keep the spaces before a possible marker with it, so removal can take them
            while candidate > 0 and buf[candidate - 1] in " \t":
                candidate -= 1
        return candidate

    def _open_marker_start(self, buf: str) -> int:
        """Where the last whole prefix of ``buf`` starts when only id characters follow
        it (the id may go on, or the suffix has not arrived yet); else ``len(buf)``."""
        prefix, suffix = self._prefix, self._suffix
        start = buf.rfind(prefix) if prefix else -1
        if start < 0:
            return len(buf)
        tail = buf[start + len(prefix):]
        m = _ID_CHARS.match(tail)
        id_len = m.end() if m else 0
        rest = tail[id_len:]
        pending_suffix = bool(suffix) and suffix.startswith(rest) and rest != suffix
        if id_len <= _MAX_ID_CHARS and (rest == "" or pending_suffix):
            return start
        return len(buf)


def _partial_prefix_start(buf: str, prefix: str) -> int:
    """Where the end of ``buf`` is a proper beginning of ``prefix`` ("#", "#re"), the
    longest such; ``len(buf)`` when it is none."""
    for k in range(min(len(prefix) - 1, len(buf)), 0, -1):
        if prefix.startswith(buf[-k:]):
            return len(buf) - k
    return len(buf)
