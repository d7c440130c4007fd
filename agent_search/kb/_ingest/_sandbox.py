"""Parsing hostile files without letting them cost without bound.

Third-party parsers (pypdf, trafilatura, the office readers) run in pure Python: a thread
that parses cannot be stopped, and a 6 KB PDF whose pages share one large compressed
content stream parses for minutes in hundreds of MB. So files of
:data:`~agent_search.kb._ingest._formats.PARSED_SUFFIXES` are parsed in a child process
(``python -m agent_search.kb._ingest._sandbox``) that the ingest starts on first use and keeps
for the run:

* **time** — each file has a deadline that follows from its size (:func:`parse_seconds`:
  3 s plus 30 s per MB), at most ``kb.max_parse_seconds``; past it the child is killed,
  the file is reported as skipped, and the next file gets a fresh child;
* **memory** — the child limits its own address space to ``kb.max_parse_memory_mb``
  (``RLIMIT_AS``), so a decompression bomb ends in a ``MemoryError`` in the child;
* **work** — pages and decompressed bytes are counted while parsing
  (:class:`~agent_search.kb._ingest._document.Limits`).

Requests and answers are JSON lines on the child's stdin and stdout (never pickle: the
child's output is derived from untrusted files). A child that dies (killed by the
system, a crash in a C parser) skips its file the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from agent_search.kb._ingest._document import Block, Document, Limits, Skipped
from agent_search.kb._ingest._formats import load_file
from agent_search.kb._ingest._ocr import PageTick

_DONE = object()
READY = b"ready\n"
STARTUP_SECONDS = 120.0
"""How long the child may take to import its parsers (a loaded machine is slow)."""


class ParseSandbox:
    """One child process that parses files, one at a time, each under a deadline.

    Blocking (call it from a worker thread). Use as a context manager, or call
    :meth:`close`; both end the child."""

    def __init__(self, limits: Limits, *, seconds: float, memory_mb: int,
                 run_seconds: float = float("inf"), page_seconds: float = 120.0) -> None:
        self.limits = limits
        self.seconds = seconds
        self.page_seconds = page_seconds
        """The deadline of one page read by OCR (``kb.max_ocr_page_seconds``)."""
        self.memory_mb = memory_mb
        self.left = run_seconds
        """Parse time left to the run (:func:`run_parse_seconds`); each file's deadline is
        at most this, and a file that finds it spent is skipped unread."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = False
        """The child has said it is ready (its imports done)."""
        self._lines: queue.Queue[object] = queue.Queue()

    def __enter__(self) -> ParseSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self, path: Path, key: str, seconds: float | None = None,
             on_page: PageTick | None = None) -> Iterator[Document | Skipped]:
        """The documents of one file, as :func:`~agent_search.kb._ingest._formats.load_file` gives
        them, or one :class:`Skipped` saying which limit it went over. ``seconds``: this
        file's deadline (default the sandbox's), e.g. from its size
        (:func:`parse_seconds`). A page read by OCR has a deadline of its own
        (``page_seconds``) instead, and ``on_page(page, pages)`` is called before each."""
        seconds = min(self.seconds if seconds is None else seconds, self.left)
        if seconds < MIN_PARSE_SECONDS:
            yield Skipped(str(path), "not parsed: this ingest's parse time, which follows "
                                     "from the size of its files, is spent")
            return
        request = {"path": str(path), "key": key, **asdict(self.limits)}
        try:
            proc = self._start()
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except OSError as exc:
            self._kill()
            yield Skipped(str(path), f"cannot parse: the parser process failed ({exc})")
            return
        line = yield from self._answer(path, seconds, on_page)
        if line is None:
            return
        if not isinstance(line, bytes):  # the child ended without an answer
            code = self._kill()
            yield Skipped(str(path), _death(code, self.memory_mb))
            return
        for item in json.loads(line):
            yield _from_json(item)

    def _answer(self, path: Path, seconds: float,
                on_page: PageTick | None) -> Generator[Skipped, None, object]:
        """Wait for the child's answer (bytes, or :data:`_DONE`), passing on its page
        ticks; None (after one :class:`Skipped`) when a deadline passed. Time spent
        before the first page of OCR counts against the run's parse time; OCR has its
        own limits (pages, seconds a page and a file)."""
        started = time.monotonic()
        wait, page = seconds, 0
        while True:
            try:
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                if not page:
                    self.left -= seconds
                self._kill()
                yield self._late(path, seconds, page, wait)
                return None
            if isinstance(line, bytes) and line.startswith(b"{"):  # a page tick
                tick = json.loads(line)
                if not page:
                    self.left -= time.monotonic() - started
                page = int(tick["page"])
                wait = self.page_seconds
                if on_page is not None:
                    on_page(page, int(tick["pages"]))
                continue
            if not page:
                self.left -= time.monotonic() - started
            return line

    def _late(self, path: Path, seconds: float, page: int, wait: float) -> Skipped:
        if page:
            return Skipped(str(path), f"OCR of page {page} took over {wait:.3g} s "
                                      "(kb.max_ocr_page_seconds)")
        why = "kb.max_parse_seconds" if seconds >= self.seconds else \
            f"the budget of a {path.stat().st_size:,}-byte file"
        return Skipped(str(path), f"parsing took over {seconds:.3g} s ({why})")

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def spawn(self) -> None:
        """Start the child now without waiting for it: its imports (~0.7 s of CPU) then
        overlap what the caller does before the first file, such as loading the model.
        :meth:`load` waits for it to be ready."""
        if self._proc is None or self._proc.poll() is not None:
            self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        self._kill()
        self._lines = queue.Queue()
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_search.kb._ingest._sandbox", str(self.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True)
        assert proc.stdout is not None
        threading.Thread(target=_pump, args=(proc.stdout, self._lines), daemon=True,
                         name="kb-parse-reader").start()
        self._proc, self._ready = proc, False
        return proc

    def _start(self) -> subprocess.Popen[bytes]:
        """The child, ready for a request: started if there is none (or it died), and
        waited for once until it has imported its parsers."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            proc = self._spawn()
        if self._ready:
            return proc
        # the deadline of a file starts once the child has imported its parsers
        try:
            ready = self._lines.get(timeout=max(STARTUP_SECONDS, self.seconds))
        except queue.Empty:
            ready = None
        if ready != READY:
            self._kill()
            raise OSError("it did not start")
        self._ready = True
        return proc

    def _kill(self) -> int | None:
        """End the child (ours, by its handle); its exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        return code


PARSE_FLOOR_SECONDS = 3.0
"""What any file may take to parse, however small (the child's start is not counted)."""
PARSE_SECONDS_PER_MB = 30.0
"""And per MB of the file: real documents parse at well over 1 MB/s; a few KB that ask
for a minute (pages sharing one huge content stream, a sheet declaring a million rows)
are hostile."""


def parse_seconds(size: int, most: float) -> float:
    """A file's parse deadline from its size in bytes: :data:`PARSE_FLOOR_SECONDS` plus
    :data:`PARSE_SECONDS_PER_MB` per MB, at most ``most`` (``kb.max_parse_seconds``), so
    a few KB cannot buy a minute of CPU (issue 32 item 2)."""
    return min(most, PARSE_FLOOR_SECONDS + PARSE_SECONDS_PER_MB * size / 1e6)


MIN_PARSE_SECONDS = 0.5
RUN_SECONDS_PER_FILE = 0.5


def run_parse_seconds(sizes: list[int], most: float) -> float:
    """The parse time of a whole run of files of these ``sizes``: a floor, plus half a
    second and :data:`PARSE_SECONDS_PER_MB` a MB per file, each at most ``most``. A call
    of 100 small HTML documents gets about a minute in all, not 100 floors (or 100
    times ``kb.max_parse_seconds``)."""
    return PARSE_FLOOR_SECONDS + sum(
        min(most, RUN_SECONDS_PER_FILE + PARSE_SECONDS_PER_MB * size / 1e6) for size in sizes)


def _pump(stream: IO[bytes], lines: queue.Queue[object]) -> None:
    """Move the child's answer lines to ``lines``; :data:`_DONE` when it ends."""
    with contextlib.suppress(OSError, ValueError):
        for line in stream:
            lines.put(line)
    lines.put(_DONE)


def _death(code: int | None, memory_mb: int) -> str:
    if code is not None and code < 0:
        return f"cannot parse: the parser process was killed (signal {-code})"
    return (f"cannot parse: the parser process ended (exit {code}); out of memory? "
            f"(kb.max_parse_memory_mb = {memory_mb})")


def _to_json(item: Document | Skipped) -> dict[str, Any]:
    if isinstance(item, Skipped):
        return {"skipped": item.source, "reason": item.reason}
    return {"doc_id": item.doc_id, "source": item.source, "title": item.title,
            "warnings": item.warnings, "ocr_pages": item.ocr_pages,
            "blocks": [[b.text, list(b.headings), b.page] for b in item.blocks]}


def _from_json(item: dict[str, Any]) -> Document | Skipped:
    if "skipped" in item:
        return Skipped(str(item["skipped"]), str(item["reason"]))
    blocks = [Block(str(text), tuple(str(h) for h in headings),
                    page if isinstance(page, int) else None)
              for text, headings, page in item["blocks"]]
    return Document(str(item["doc_id"]), str(item["source"]), item["title"], blocks,
                    [str(w) for w in item["warnings"]],
                    [int(p) for p in item.get("ocr_pages") or ()])


def _limit_memory(megabytes: int) -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        size = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))


def _serve(memory_mb: int) -> None:
    """The child: one JSON request per line in, one JSON list of documents per line out."""
    import pypdf  # noqa: F401  (imported before the clock of the first file starts)
    import trafilatura

    from agent_search.kb._ingest import _ocr

    # trafilatura loads its helpers on its first page (~1 s on a loaded machine): before
    # the clock of the first file starts, not within a 1 s deadline
    with contextlib.suppress(Exception):
        trafilatura.extract("<html><body><article><p>ready</p></article></body></html>")
    _limit_memory(memory_mb)
    out = sys.stdout.buffer
    out.write(READY)
    out.flush()

    def tick(page: int, pages: int) -> None:
        out.write(json.dumps({"page": page, "pages": pages}).encode() + b"\n")
        out.flush()

    _ocr.on_page(tick)
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        request = json.loads(raw)
        limits = Limits(int(request["max_chars"]), int(request["max_pages"]),
                        int(request["max_decompressed"]), int(request["max_ocr_pages"]),
                        int(request["max_pixels"]), float(request["max_ocr_seconds"]),
                        int(request["ocr_workers"]))
        try:
            items = [_to_json(d) for d in load_file(Path(request["path"]), request["key"],
                                                    limits=limits)]
        except MemoryError:
            items = [_to_json(Skipped(request["path"], (
                "cannot parse: out of memory (kb.max_parse_memory_mb)")))]
        out.write(json.dumps(items).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _serve(int(sys.argv[1]))
