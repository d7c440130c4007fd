"""``kb ingest --server URL`` and ``kb rm --server URL``: the work sent to a running
``agent-search serve`` (which holds the data home's store, so a second process cannot
open it), and the hint that says so when a kb command finds the store held.

Text documents (``.txt .md .csv .html``, as :mod:`agent_search.kb._uploads` takes
them) are sent as JSON in requests of at most :data:`BATCH_DOCUMENTS` documents and about
:data:`BATCH_BYTES` bytes (the service's default body cap is 1 MB); PDF and office files
(:data:`FILE_SUFFIXES`) are uploaded one per request to ``POST /v1/kb/{collection}/files``,
where the service parses them in its sandbox. The API key comes
from the environment variable named by ``--api-key-env`` (default
``AGENT_SEARCH_API_KEY``); its identity owns the documents.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from agent_search.kb._loaders import Skipped, iter_files
from agent_search.kb._uploads import TEXT_SUFFIXES, check_name

FILE_SUFFIXES = (".pdf", ".docx", ".pptx", ".xlsx")
"""Sent as files (the server parses them); the text suffixes are sent as text."""
BATCH_DOCUMENTS = 100
BATCH_BYTES = 900_000
TIMEOUT = 600.0
_PID = re.compile(r"\(pid (\d+)\)")


class RemoteError(Exception):
    """The server refused or could not be reached; the message is one line."""


def held_by_server(message: str) -> str:
    """A hint for a store held by another process: which one, when it is a local
    ``agent-search serve`` (its pid is in the lock), and how to send the work there."""
    match = _PID.search(message)
    args: list[str] = []
    if match:
        try:
            raw = Path(f"/proc/{match.group(1)}/cmdline").read_bytes()
            args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
        except OSError:
            args = []
    if "serve" not in args:
        return ("; if 'agent-search serve' holds it, send the work to it: "
                "--server http://127.0.0.1:8000")
    host = _flag(args, "--host") or "127.0.0.1"
    port = _flag(args, "--port") or "8000"
    pid = match.group(1) if match else "?"
    return (f"; it is held by a running 'agent-search serve' (pid {pid}): send the work "
            f"to it with --server http://{host}:{port}")


def _flag(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _headers(api_key_env: str) -> dict[str, str]:
    key = os.environ.get(api_key_env)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _error(response: httpx.Response) -> RemoteError:
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = response.text[:200]
    return RemoteError(f"the server answered {response.status_code}: {message}")


def documents_of(paths: list[Path]) -> tuple[list[tuple[str, str | Path]], list[Skipped]]:
    """(name, text) of the text files under ``paths``, (name, path) of the PDF and
    office files; the rest, reported."""
    docs: list[tuple[str, str | Path]] = []
    skipped: list[Skipped] = []
    names: dict[str, Path] = {}
    for item in iter_files(paths):
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        if item.suffix.lower() in FILE_SUFFIXES:
            name = item.name
        elif item.suffix.lower() in TEXT_SUFFIXES:
            name = check_name(item.name)
        else:
            skipped.append(Skipped(str(item), f"--server takes "
                                              f"{' '.join(TEXT_SUFFIXES + FILE_SUFFIXES)}; "
                                              f"ingest {item.suffix} files with the server "
                                              "stopped"))
            continue
        if name in names:
            raise RemoteError(f"{item} and {names[name]} have the same name; the server "
                              "names uploads by file name")
        names[name] = item
        if item.suffix.lower() in FILE_SUFFIXES:
            docs.append((name, item))
            continue
        try:
            docs.append((name, item.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            skipped.append(Skipped(str(item), f"cannot read: {exc}"))
    return docs, skipped


def send_documents(url: str, collection: str, docs: list[tuple[str, str | Path]],
                   api_key_env: str) -> dict[str, Any]:
    """POST the text documents in batches and the files one by one; the reports
    summed."""
    total: dict[str, Any] = {"collection": collection, "documents": 0, "chunks": 0,
                             "added": 0, "updated": 0, "unchanged": 0, "removed": 0,
                             "skipped": [], "warnings": []}
    batch: list[dict[str, str]] = []
    size = 0
    with httpx.Client(base_url=url.rstrip("/"), timeout=TIMEOUT,
                      headers=_headers(api_key_env)) as client:
        base = f"/v1/kb/{quote(collection, safe='')}"

        def add(report: dict[str, Any]) -> None:
            for key in ("documents", "chunks", "added", "updated", "unchanged", "removed"):
                total[key] += int(report.get(key, 0))
            total["skipped"] += report.get("skipped", [])
            total["warnings"] += report.get("warnings", [])

        def flush() -> None:
            nonlocal batch, size
            if not batch:
                return
            add(_post(client, url, f"{base}/documents", json={"documents": batch}))
            batch, size = [], 0

        for name, text in docs:
            if isinstance(text, Path):
                try:
                    with text.open("rb") as fh:
                        add(_post(client, url, f"{base}/files", files=[("file", (name, fh))]))
                except OSError as exc:
                    total["skipped"].append({"source": str(text),
                                             "reason": f"cannot read: {exc}"})
                continue
            cost = len(text.encode()) + len(name) + 64
            if batch and (len(batch) >= BATCH_DOCUMENTS or size + cost > BATCH_BYTES):
                flush()
            batch.append({"name": name, "text": text})
            size += cost
        flush()
    return total


def _post(client: httpx.Client, url: str, path: str, **kwargs: Any) -> dict[str, Any]:
    try:
        response = client.post(path, **kwargs)
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot reach {url}: {exc}") from exc
    if response.status_code != 200:
        raise _error(response)
    report: dict[str, Any] = response.json()
    return report


def remove_remote(url: str, collection: str, document: str, api_key_env: str) -> list[Any]:
    """DELETE one of the caller's documents: a local path of a text file is named as the
    server named its upload (``upload:<file name>``)."""
    if not document.startswith("upload:") \
            and Path(document).suffix.lower() in TEXT_SUFFIXES + FILE_SUFFIXES:
        document = "upload:" + Path(document).name
    path = f"/v1/kb/{quote(collection, safe='')}/documents/{quote(document, safe='/')}"
    try:
        response = httpx.delete(url.rstrip("/") + path, headers=_headers(api_key_env),
                                timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot reach {url}: {exc}") from exc
    if response.status_code != 200:
        raise _error(response)
    removed: list[Any] = response.json()["removed"]
    return removed
