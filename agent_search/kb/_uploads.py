"""Documents sent as text (the HTTP service's ``POST /v1/kb/{collection}/documents``, or
a Python caller): each is a name and its text, ingested as the file ``upload:<name>``
would be — the name's suffix picks the reader (``.txt``, ``.md``, ``.csv``, ``.html``;
none means ``.txt``), the source ``upload:<name>`` is its identity (no file's source has
that form, and a folder ingest never mirrors it away), so sending the same
name again updates the document in place, and the caller's access record owns it (two
owners sending the same name have two documents).

Bounded before anything is written: at most :data:`MAX_DOCUMENTS` per call, names of at
most :data:`MAX_NAME_CHARS` characters without path separators, and the ingest's own
caps (``kb.max_file_mb`` per document, ``kb.max_run_mb`` per call).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from agent_search.config import SearchConfig
from agent_search.kb._document import Skipped
from agent_search.kb._schema import UPLOAD_PREFIX
from agent_search.kb._store import check_collection_name, is_eval_collection
from agent_search.kb._tenancy import Access
from agent_search.kb._writer import ProgressCallback
from agent_search.kb.ingest import IngestReport, _ingest_sync
from agent_search.kb.settings import KBSettings

if TYPE_CHECKING:
    from agent_search.context import Context

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".csv", ".html", ".htm")
MAX_DOCUMENTS = 100
MAX_NAME_CHARS = 200
_NAME = re.compile(r"^[^/\\\x00-\x1f]+$")


def check_name(name: str) -> str:
    """A document's name as sent: its file name (with ``.txt`` when it has no suffix)."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS \
            or not _NAME.match(name) or name.startswith(".") or name.strip() in ("..", "."):
        raise ValueError(f"document name {name[:80]!r}: a file name of 1 to {MAX_NAME_CHARS} "
                         "characters, not starting with '.', without '/', '\\' or control "
                         "characters")
    suffix = Path(name).suffix.lower()
    if not suffix:
        return f"{name}.txt"
    if suffix not in TEXT_SUFFIXES:
        raise ValueError(f"document name {name[:80]!r}: text documents are "
                         f"{' '.join(TEXT_SUFFIXES)} (or no suffix, read as .txt)")
    return name


async def ingest_texts(config: SearchConfig, collection: str,
                       documents: Sequence[tuple[str, str]], *, access: Access | None = None,
                       ctx: Context | None = None) -> IngestReport:
    """Ingest ``(name, text)`` documents into ``collection`` as ``upload:<name>``.

    Raises ``ValueError`` for a bad collection name or document name, too many documents,
    or an access that is neither public nor owned; otherwise as
    :func:`~agent_search.kb.ingest.ingest_paths` (a document too large or without text is
    in ``report.skipped``)."""
    check_collection_name(collection)
    if is_eval_collection(collection):
        raise ValueError(f"collection names starting with 'eval-' are reserved for "
                         f"'agent-search eval retrieval': {collection!r}")
    if not documents:
        raise ValueError("no documents")
    if len(documents) > MAX_DOCUMENTS:
        raise ValueError(f"{len(documents)} documents; at most {MAX_DOCUMENTS} per call")
    names = [check_name(name) for name, _ in documents]
    if len(set(names)) != len(names):
        raise ValueError("two documents have the same name")
    if access is None:
        access = Access.of(ctx.user_id, ctx.team_id) if ctx is not None else Access.of()
    if not access.public and access.owner is None and access.team is None:
        raise ValueError("a document that is not public needs an owner or a team")
    settings = KBSettings.from_config(config)
    texts = [text for _, text in documents]
    return await anyio.to_thread.run_sync(_ingest_texts_sync, config.home, settings,
                                          collection, names, texts, access)


def _ingest_texts_sync(home: Path, settings: KBSettings, collection: str, names: list[str],
                       texts: list[str], access: Access) -> IngestReport:
    with tempfile.TemporaryDirectory(prefix="agent-search-upload-") as tmp:
        paths: dict[Path, str] = {}
        for name, text in zip(names, texts, strict=True):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8", errors="replace")
            paths[path] = UPLOAD_PREFIX + name
        return ingest_named_files(home, settings, paths, collection, access)


def ingest_named_files(home: Path, settings: KBSettings, paths: dict[Path, str],
                       collection: str, access: Access,
                       progress: ProgressCallback | None = None) -> IngestReport:
    """Ingest temporary files each under its ``upload:<name>`` source (``paths``: file →
    source), and report skipped files and warnings by that source, not the temporary path
    (which means nothing to the caller)."""
    report = _ingest_sync(home, settings, list(paths), collection, settings.graph, progress,
                          access, False, paths)
    by_path = {str(p): source for p, source in paths.items()}
    report.skipped = [Skipped(by_path.get(s.source, s.source), s.reason)
                      for s in report.skipped]
    report.warnings = [Skipped(by_path.get(w.source, w.source), w.reason)
                       for w in report.warnings]
    return report
