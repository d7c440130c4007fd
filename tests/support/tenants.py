"""A small SQLite database with private rows of several tenants, for the db security tests.

``notes`` carries Yao's permission columns and ``deleted_at``; ``members`` has an
*integer* owner column (identity aliasing). Users: u1 and u2 in team t1, u3 in team t2;
members are owned by users 1 and 12; ``comments`` point at notes (relation
subqueries).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from agent_search.config import SearchConfig
from agent_search.db import DBHandler, create_handler

NOTE_ROWS: list[dict[str, Any]] = [
    # id, owner, team, public, share, deleted
    {"id": 1, "title": "u1 private plan", "category": "alpha", "body": "SECRET-U1 launch",
     "amount": 10, "price": 1.5, "__yao_created_by": "u1", "__yao_team_id": "t1",
     "public": False, "share": "private", "deleted_at": None},
    {"id": 2, "title": "u2 private diary", "category": "gamma", "body": "SECRET-U2 diary",
     "amount": 20, "price": 2.5, "__yao_created_by": "u2", "__yao_team_id": "t1",
     "public": False, "share": "private", "deleted_at": None},
    {"id": 3, "title": "t1 team memo", "category": "beta", "body": "team t1 memo",
     "amount": 30, "price": 3.5, "__yao_created_by": "u2", "__yao_team_id": "t1",
     "public": False, "share": "team", "deleted_at": None},
    {"id": 4, "title": "u3 private ledger", "category": "delta", "body": "SECRET-U3 ledger",
     "amount": 40, "price": 4.5, "__yao_created_by": "u3", "__yao_team_id": "t2",
     "public": False, "share": "private", "deleted_at": None},
    {"id": 5, "title": "public welcome", "category": "alpha", "body": "hello everyone",
     "amount": 50, "price": 5.5, "__yao_created_by": "u3", "__yao_team_id": "t2",
     "public": True, "share": "private", "deleted_at": None},
    {"id": 6, "title": "public removed", "category": "alpha", "body": "deleted notice",
     "amount": 60, "price": 6.5, "__yao_created_by": "u1", "__yao_team_id": "t1",
     "public": True, "share": "team", "deleted_at": dt.datetime(2025, 1, 1)},
]
for _i, _row in enumerate(NOTE_ROWS):
    _row["created_at"] = dt.datetime(2025, 1, 1) + dt.timedelta(days=_i)

MEMBER_ROWS: list[dict[str, Any]] = [
    {"id": 1, "name": "member of user 1", "__yao_created_by": 1, "public": False},
    {"id": 2, "name": "member of user 12", "__yao_created_by": 12, "public": False},
    {"id": 3, "name": "public member", "__yao_created_by": 12, "public": True},
]

COMMENT_ROWS: list[dict[str, Any]] = [
    {"id": 1, "note_id": 6, "text": "on the removed note"},
    {"id": 2, "note_id": 5, "text": "on the welcome note"},
    {"id": 3, "note_id": 2, "text": "on a private note"},
]

USERS = {"u1": "t1", "u2": "t1", "u3": "t2"}


def visible_notes(user: str | None, team: str | None) -> set[int]:
    """What the documented rule lets a caller see (soft-deleted rows never)."""
    return {r["id"] for r in NOTE_ROWS if r["deleted_at"] is None and (
        r["public"] or (user and r["__yao_created_by"] == user)
        or (team and r["__yao_team_id"] == team and r["share"] == "team"))}


def create_tenant_db(path: Path) -> Path:
    meta = sa.MetaData()
    notes = sa.Table(
        "notes", meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(80)), sa.Column("category", sa.String(40)),
        sa.Column("body", sa.Text), sa.Column("amount", sa.Integer),
        sa.Column("price", sa.Numeric(10, 2)), sa.Column("created_at", sa.DateTime),
        sa.Column("__yao_created_by", sa.String(40)), sa.Column("__yao_team_id", sa.String(40)),
        sa.Column("public", sa.Boolean), sa.Column("share", sa.String(10)),
        sa.Column("deleted_at", sa.DateTime))
    members = sa.Table(
        "members", meta,
        sa.Column("id", sa.Integer, primary_key=True), sa.Column("name", sa.String(80)),
        sa.Column("__yao_created_by", sa.Integer), sa.Column("public", sa.Boolean))
    comments = sa.Table(
        "comments", meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("note_id", sa.Integer, sa.ForeignKey("notes.id")),
        sa.Column("text", sa.String(200)))
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        meta.create_all(conn)
        conn.execute(notes.insert(), NOTE_ROWS)
        conn.execute(members.insert(), MEMBER_ROWS)
        conn.execute(comments.insert(), COMMENT_ROWS)
    engine.dispose()
    return path


NOTE_COLUMNS: list[dict[str, Any]] = [
    {"name": "id", "type": "ID"},
    {"name": "title", "type": "string", "length": 80},
    {"name": "category", "type": "string", "length": 40, "index": True},
    {"name": "body", "type": "text"},
    {"name": "amount", "type": "integer"},
    {"name": "price", "type": "decimal", "precision": 10, "scale": 2},
    {"name": "created_at", "type": "datetime"},
]


def write_model(config_dir: Path, file: str, definition: dict[str, Any]) -> Path:
    path = config_dir / "models" / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(definition))
    return path


def note_definition(*, extra: list[dict[str, Any]] | None = None,
                    permission: bool = False) -> dict[str, Any]:
    return {"name": "Note", "table": {"name": "notes"},
            "columns": [*NOTE_COLUMNS, *(extra or [])],
            "option": {"permission": permission}}


def tenant_handler(db: Path, home: Path, config_dir: Path | None = None,
                   **db_settings: Any) -> DBHandler:
    config = SearchConfig(home=home, db={"url": f"sqlite:///{db}", **db_settings})
    return create_handler(config, config_dir=config_dir)
