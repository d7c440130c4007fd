"""``kb ingest|rm|list --server URL``: the work sent to a running ``agent-search serve``
(which holds the data home's store, so a second process cannot open it), and the hint
that says so when a kb command finds the store held.

A folder's files are named ``<folder>/<path in it>`` (:func:`folder_name`: the folder as
a local ingest names it, relative to the project), a file named alone by its file name;
the server stores them as ``upload:<name>``. After the files are sent, each folder is
mirrored (:func:`mirror_remote`): the server removes the caller's documents of that
folder whose file is gone, unless ``--keep-missing``.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from agent_search._text import path_text
from agent_search.kb import (
    BINARY_SUFFIXES,
    TEXT_SUFFIXES,
    UPLOAD_PREFIX,
    Skipped,
    check_folder,
    check_name,
    iter_files,
    source_key,
)

FILE_SUFFIXES = BINARY_SUFFIXES
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


def client_root(config_dir: Path | None) -> Path:
    """The folder a local ingest names sources relative to (the project, ``kb.source_root``
    else the data home's parent): what a folder's documents are named by; the working
    folder when the project's configuration cannot be read (a client away from it)."""
    from agent_search.cli.search import resolve_config_dir
    from agent_search.errors import ConfigError
    from agent_search.kb import source_root
    from agent_search.kb.settings import KBSettings
    from agent_search.loader import load_config

    try:
        config = load_config(resolve_config_dir(config_dir))
        return source_root(KBSettings.from_config(config), config.home)
    except (ConfigError, ValueError, OSError):
        return Path.cwd().resolve()


def _headers(api_key_env: str) -> dict[str, str]:
    key = os.environ.get(api_key_env)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _client(url: str, api_key_env: str) -> httpx.Client:
    return httpx.Client(base_url=url.rstrip("/"), timeout=TIMEOUT,
                        headers=_headers(api_key_env))


def _call(client: httpx.Client, url: str, method: str, path: str,
          **kwargs: Any) -> httpx.Response:
    """One request; a server that cannot be reached is a :class:`RemoteError`."""
    try:
        return client.request(method, path, **kwargs)
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot reach {url}: {exc}") from exc


def _answer(client: httpx.Client, url: str, method: str, path: str,
            **kwargs: Any) -> dict[str, Any]:
    """One request's JSON answer; any status but 200 is a :class:`RemoteError`."""
    response = _call(client, url, method, path, **kwargs)
    if response.status_code != 200:
        raise _error(response)
    answer: dict[str, Any] = response.json()
    return answer


def _error(response: httpx.Response) -> RemoteError:
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = response.text[:200]
    return RemoteError(f"the server answered {response.status_code}: {message}")


@dataclass
class Outgoing:
    """What ``kb ingest --server`` sends: the files by the name the server gives them
    (``notes/sub/a.md`` for a file of the folder ``notes``, the file name for a file
    named alone), the files it cannot send, and each folder with the files it holds now
    (relative to it), for the mirror."""

    docs: list[tuple[str, Path]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    folders: list[tuple[str, list[str]]] = field(default_factory=list)


def folder_name(folder: Path, root: Path) -> str:
    """The name of a folder's documents on the server, as a local ingest names them: its
    path relative to the project (``root``, the kb source root), else its absolute path
    without the leading ``/``; the project folder itself is named by its own name."""
    key = source_key(folder, root)
    if key == ".":
        key = root.resolve().name or "root"
    try:
        return check_folder(key.lstrip("/"))
    except ValueError as exc:
        raise ValueError(f"{folder}: cannot be sent with --server ({exc})") from None


def documents_of(paths: list[Path], root: Path) -> Outgoing:
    """The files under ``paths`` to send, with their names; the rest, reported."""
    out = Outgoing()
    names: dict[str, Path] = {}
    for path in paths:
        label = folder_name(path, root) if path.is_dir() else None
        present: list[str] = []
        for item in iter_files([path]):
            found = item if isinstance(item, Skipped) else _named(item, path, label)
            if isinstance(found, Skipped):
                out.skipped.append(found)
                continue
            name, rel, file = found
            if label is not None:
                present.append(rel)
            if not _named_before(names, name, file):
                names[name] = file
                out.docs.append((name, file))
        if label is not None:
            out.folders.append((label, present))
    return out


def _named(item: Path, path: Path, label: str | None) -> tuple[str, str, Path] | Skipped:
    """The name ``item`` (found under ``path``, a folder named ``label`` on the server or
    a file) has on the server, its path inside the folder, and itself; why it is not sent
    when it is not (a format the server does not take, a name it refuses)."""
    suffix = item.suffix.lower()
    if suffix not in TEXT_SUFFIXES + FILE_SUFFIXES:
        return Skipped(str(item), (f"--server takes {' '.join(TEXT_SUFFIXES + FILE_SUFFIXES)}; "
                                   f"ingest {item.suffix} files with the server stopped"))
    rel = item.relative_to(path).as_posix() if label is not None else item.name
    name = path_text(f"{label}/{rel}" if label is not None else rel)
    try:  # a name the server refuses (not UTF-8, too long) never was a document
        check_name(name, text=suffix in TEXT_SUFFIXES)
    except ValueError as exc:
        return Skipped(path_text(str(item)), str(exc))
    return name, rel, item


def _named_before(names: dict[str, Path], name: str, item: Path) -> bool:
    """Is ``name`` taken already by the same file (a folder and one inside it)? A
    :class:`RemoteError` when another file has it."""
    if name not in names:
        return False
    if names[name].resolve() == item.resolve():
        return True
    raise RemoteError(f"{item} and {names[name]} would have the same name {name!r} on the "
                      "server")


def send_documents(url: str, collection: str, docs: list[tuple[str, Path]],
                   api_key_env: str, progress: Callable[[int, int], None] | None = None
                   ) -> dict[str, Any]:
    """POST the text documents in batches and the files one by one; the reports summed.
    ``progress(bytes_sent, bytes_total)`` after each request."""
    total: dict[str, Any] = {"collection": collection, "files": 0, "documents": 0,
                             "chunks": 0, "added": 0, "updated": 0, "unchanged": 0,
                             "removed": 0, "skipped": [], "warnings": [], "missing": []}
    sizes = {name: _size_of(path) for name, path in docs}
    whole = sum(sizes.values())
    sent = 0
    batch: list[dict[str, str]] = []
    batch_bytes = 0
    with _client(url, api_key_env) as client:
        base = f"/v1/kb/{quote(collection, safe='')}"

        def add(report: dict[str, Any], done: int) -> None:
            nonlocal sent
            for key in ("files", "documents", "chunks", "added", "updated", "unchanged",
                        "removed"):
                total[key] += int(report.get(key, 0))
            total["skipped"] += report.get("skipped", [])
            total["warnings"] += report.get("warnings", [])
            sent += done
            if progress is not None:
                progress(sent, whole)

        def flush() -> None:
            nonlocal batch, batch_bytes
            if batch:
                add(_answer(client, url, "POST", f"{base}/documents",
                            json={"documents": batch}),
                    sum(sizes[d["name"]] for d in batch))
            batch, batch_bytes = [], 0

        if progress is not None:
            progress(0, whole)
        for name, path in docs:
            if path.suffix.lower() in FILE_SUFFIXES:
                folder, _, base_name = name.rpartition("/")
                query = {"folder": folder} if folder else None
                try:
                    with path.open("rb") as fh:
                        add(_answer(client, url, "POST", f"{base}/files", params=query,
                                    files=[("file", (base_name, fh))]), sizes[name])
                except OSError as exc:
                    total["skipped"].append({"source": str(path),
                                             "reason": f"cannot read: {exc}"})
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                total["skipped"].append({"source": str(path), "reason": f"cannot read: {exc}"})
                continue
            cost = len(text.encode()) + len(name) + 64
            if batch and (len(batch) >= BATCH_DOCUMENTS or batch_bytes + cost > BATCH_BYTES):
                flush()
            batch.append({"name": name, "text": text})
            batch_bytes += cost
        flush()
    return total


def mirror_remote(url: str, collection: str, folders: list[tuple[str, list[str]]],
                  api_key_env: str) -> list[dict[str, Any]]:
    """Ask the server to remove the caller's documents of each folder whose file is gone
    (``POST /v1/kb/{collection}/mirror``); what it removed. A collection that does not
    exist has nothing to remove."""
    removed: list[dict[str, Any]] = []
    path = f"/v1/kb/{quote(collection, safe='')}/mirror"
    with _client(url, api_key_env) as client:
        for folder, present in folders:
            response = _call(client, url, "POST", path,
                             json={"folder": folder, "present": present})
            if response.status_code == 404:
                continue
            if response.status_code != 200:
                raise _error(response)
            removed += response.json()["removed"]
    return removed


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def remove_remote(url: str, collection: str, document: str, api_key_env: str,
                  root: Path) -> list[Any]:
    """DELETE one of the caller's documents. A local path is tried under each name the
    server may have given its file: as part of a folder (its path relative to ``root``,
    or under the project folder's name), then alone (its file name)."""
    names = [document]
    if not document.startswith(UPLOAD_PREFIX) \
            and Path(document).suffix.lower() in TEXT_SUFFIXES + FILE_SUFFIXES:
        path = Path(document).expanduser()
        key = source_key(path, root).lstrip("/")
        project = root.resolve().name
        names = [UPLOAD_PREFIX + n for n in dict.fromkeys(
            (key, f"{project}/{key}", path.name))]
    with _client(url, api_key_env) as client:
        for name in names:
            where = f"/v1/kb/{quote(collection, safe='')}/documents/{quote(name, safe='/')}"
            response = _call(client, url, "DELETE", where)
            if response.status_code == 404 and name != names[-1] \
                    and response.json().get("error", {}).get("param") == "document":
                continue
            if response.status_code != 200:
                raise _error(response)
            removed: list[Any] = response.json()["removed"]
            return removed
    return []


def collections_remote(url: str, api_key_env: str) -> list[dict[str, Any]]:
    """The collections the caller can read on the server (``GET /v1/kb``)."""
    with _client(url, api_key_env) as client:
        rows: list[dict[str, Any]] = _answer(client, url, "GET", "/v1/kb")["collections"]
        return rows


def list_remote(url: str, collection: str, api_key_env: str, *, limit: int = 500,
                cursor: str | None = None, pages: int | None = None
                ) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    """The documents of ``collection`` the caller may read, a page at a time
    (``GET /v1/kb/{collection}/documents?limit=&cursor=``): each page and the cursor of
    the next (None after the last); ``pages`` stops after that many."""
    where = f"/v1/kb/{quote(collection, safe='')}/documents"
    with _client(url, api_key_env) as client:
        done = 0
        while pages is None or done < pages:
            params: dict[str, Any] = {"limit": limit}
            if cursor is not None:
                params["cursor"] = cursor
            answer = _answer(client, url, "GET", where, params=params)
            cursor = answer.get("next_cursor")
            done += 1
            yield answer["documents"], cursor
            if cursor is None:
                return
