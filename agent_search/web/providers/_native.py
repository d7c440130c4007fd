"""A provider's native records: its API's own result objects, typed.

Each provider module defines its API's record type (a :class:`NativeRecord`) beside
its class, which names its :class:`NativeFormat` (where the payload keeps its results,
their record type, the field holding a result's link, the payload's total);
:meth:`~agent_search.web.providers._base.WebProvider.native_records` reads a payload
with it. Record fields are snake_case with the API's spelling as alias; fields a record
does not name are kept (``extra="allow"``), so nothing the provider sent is lost —
except a link that is not a safe http(s) URL (``javascript:``, credentials, control
characters...), which is set to None as on the web handler's items, and an entry that
does not fit its record type, which is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_search._links import safe_url


class NativeRecord(BaseModel):
    """Base of the providers' record types."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def value_at(raw: Any, *path: str) -> Any:
    """The value at ``path`` of a JSON payload (None where the path breaks)."""
    for key in path:
        if not isinstance(raw, dict):
            return None
        raw = raw.get(key)
    return raw


def count_at(*path: str) -> Callable[[Any], int | None]:
    """A reader of the integer at ``path`` of a payload (None when it is not one)."""

    def read(raw: Any) -> int | None:
        try:
            return int(value_at(raw, *path))
        except (TypeError, ValueError):
            return None

    return read


@dataclass(frozen=True, slots=True)
class NativeFormat:
    """Where a provider's payload keeps its results, their type, the field holding each
    result's link, and the payload's total count."""

    path: tuple[str, ...]
    record: type[NativeRecord]
    link: str
    total: Callable[[Any], int | None] = lambda raw: None

    def read(self, raw: Any) -> tuple[list[NativeRecord], int | None]:
        """The typed records of a payload, and the provider's total."""
        entries = value_at(raw, *self.path) or []
        if not isinstance(entries, list):
            return [], None
        records: list[NativeRecord] = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            if self.link in entry:
                entry = {**entry, self.link: safe_url(entry[self.link])}
            try:
                records.append(self.record.model_validate(entry))
            except ValidationError:
                continue
        return records, self.total(raw)
