"""Database search: model definitions and reflection, QueryDSL on SQLAlchemy Core,
natural language → QueryDSL, permission filters; SQLite and PostgreSQL."""

from agent_search.db.builder import Caller, DSLBuildError, build_select
from agent_search.db.catalog import Catalog, ModelEntry
from agent_search.db.handler import DBHandler, create_handler
from agent_search.db.models import ColumnDef, ModelDef, RelationDef, load_definitions
from agent_search.db.permissions import PermissionColumns, permission_clause
from agent_search.db.settings import DBSettings

__all__ = [
    "Caller",
    "Catalog",
    "ColumnDef",
    "DBHandler",
    "DBSettings",
    "DSLBuildError",
    "ModelDef",
    "ModelEntry",
    "PermissionColumns",
    "RelationDef",
    "build_select",
    "create_handler",
    "load_definitions",
    "permission_clause",
]
