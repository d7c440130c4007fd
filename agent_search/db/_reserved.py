"""The project's own tables, which are never searchable.

agent-search writes tables of its own into databases it may also search: the service's
search records (``agent_search_records``, in ``server.records_url``, else ``db.url``),
the shared rate-limit buckets (``agent_search_rate_limits``) and an assistant's local
record file (``search_records``). Records hold other tenants' questions and the text of
their private chunks and rows, so none of these tables may become a model: they are left
out of reflection, and a ``*.mod.yao`` definition naming one is a configuration error.
Records are read only through the owner-checked records API (``GET /v1/records/{id}``).

Every table the project creates is named with :data:`PREFIX`; the older local record
table keeps its name and is recognised by name and exact columns, so a user's own table
that happens to be called ``search_records`` stays searchable.
"""

from __future__ import annotations

from collections.abc import Iterable

PREFIX = "agent_search_"
"""Tables named with this prefix (any case) belong to agent-search."""
LOCAL_RECORDS_TABLE = "search_records"
LOCAL_RECORDS_COLUMNS = frozenset({"request_id", "assistant", "created_at", "record"})
"""The table of :class:`agent_search.agent.RecordStore` (a SQLite file) and its columns."""


def reserved_name(name: str) -> bool:
    """True for a table name in the project's namespace (decided without the columns)."""
    return name.strip().lower().startswith(PREFIX)


def is_internal_table(name: str, columns: Iterable[str] | None = None) -> bool:
    """True for a table agent-search created: a :data:`PREFIX` name, or the local
    record table (by name and columns; with ``columns`` unknown, by name alone)."""
    if reserved_name(name):
        return True
    if name.strip().lower() != LOCAL_RECORDS_TABLE:
        return False
    return columns is None or {c.lower() for c in columns} == LOCAL_RECORDS_COLUMNS
