"""Model definitions: ``*.mod.yao`` files (JSONC, Yao's model format) and their loading.

A definition names a table and describes its columns and relations::

    {"name": "Product", "table": {"name": "products"},
     "columns": [{"name": "id", "type": "ID"},
                 {"name": "price", "type": "decimal", "label": "Price", "unit": "USD"},
                 {"name": "category", "type": "string", "index": true,
                  "option": ["audio", "video"]}],
     "relations": {"orders": {"type": "hasMany", "model": "order", "key": "product_id",
                              "foreign": "id"}},
     "option": {"permission": false, "soft_deletes": false}}

Relations read ``this.foreign = related.key`` (Yao's convention). Keys of Yao's model
format this package does not use (validations, defaults, indexes, values...) are accepted
and ignored, so Yao files load unchanged; any other key is refused as a typo, with the
file, the key, the line and the closest known key.

Model ids: ``models/product.mod.yao`` under the global config folder is ``product``
(``models/shop/item.mod.yao`` is ``shop.item``); under ``assistants/<id>/models/`` it is
``agents.<id>.product``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_search.config import config_error, read_jsonc

MODEL_SUFFIX = ".mod.yao"

# Yao column types and the coarse kinds we map them to.
_TYPE_KINDS: dict[str, str] = {
    **dict.fromkeys(["string", "char", "uuid", "enum", "ipaddress", "macaddress", "year"],
                    "string"),
    **dict.fromkeys(["text", "mediumtext", "longtext"], "text"),
    **dict.fromkeys(["id", "increments", "bigincrements", "smallincrements", "tinyincrements",
                     "mediumincrements", "integer", "biginteger", "smallinteger",
                     "tinyinteger", "mediuminteger", "unsignedinteger", "unsignedbiginteger",
                     "unsignedsmallinteger", "unsignedtinyinteger", "unsignedmediuminteger"],
                    "integer"),
    **dict.fromkeys(["float", "double", "decimal", "unsigneddecimal", "unsignedfloat",
                     "unsigneddouble"], "number"),
    "boolean": "boolean",
    "date": "date",
    **dict.fromkeys(["datetime", "datetimetz", "timestamp", "timestamptz"], "datetime"),
    **dict.fromkeys(["time", "timetz"], "string"),
    **dict.fromkeys(["json", "jsonb"], "json"),
}

_AUTO_ID_TYPES = frozenset({"id", "increments", "bigincrements", "smallincrements",
                            "tinyincrements", "mediumincrements"})


_YAO_ONLY = "Yao's model format; accepted and not used here"


def _ignored() -> Any:
    return Field(default=None, exclude=True, description=_YAO_ONLY)


class ColumnDef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: str = "string"
    label: str | None = None
    description: str | None = None
    comment: str | None = None
    unit: str | None = None
    index: bool = False
    unique: bool = False
    nullable: bool = True
    primary: bool = False
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    option: list[str] | None = Field(default=None, description="enum values")
    title: Any = _ignored()
    default: Any = _ignored()
    default_raw: Any = _ignored()
    example: Any = _ignored()
    generate: Any = _ignored()
    crypt: Any = _ignored()
    validations: Any = _ignored()
    origin: Any = _ignored()

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("column name must not be empty")
        return v

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if v.lower() not in _TYPE_KINDS:
            raise ValueError(f"unknown column type {v!r}")
        return v

    @property
    def kind(self) -> str:
        return _TYPE_KINDS[self.type.lower()]

    @property
    def is_primary(self) -> bool:
        return self.primary or self.type.lower() in _AUTO_ID_TYPES


class RelationDef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["hasOne", "hasMany"]
    model: str
    key: str
    foreign: str
    name: Any = _ignored()
    label: Any = _ignored()
    links: Any = _ignored()
    query: Any = _ignored()


class TableDef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    comment: str | None = None
    prefix: Any = _ignored()
    engine: Any = _ignored()
    charset: Any = _ignored()
    collation: Any = _ignored()


class ModelOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    permission: bool = False
    timestamps: bool = False
    soft_deletes: bool = False
    trackings: Any = _ignored()
    constraints: Any = _ignored()
    logging: Any = _ignored()
    read_only: Any = _ignored()


class ModelDef(BaseModel):
    """One ``*.mod.yao`` file."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    name: str | None = None
    description: str | None = None
    label: Any = _ignored()
    connector: Any = _ignored()
    indexes: Any = _ignored()
    values: Any = _ignored()
    table: TableDef
    columns: list[ColumnDef]
    relations: dict[str, RelationDef] = Field(default_factory=dict)
    option: ModelOption = Field(default_factory=ModelOption)
    file: str | None = None

    @field_validator("table", mode="before")
    @classmethod
    def _table(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @field_validator("columns")
    @classmethod
    def _columns(cls, v: list[ColumnDef]) -> list[ColumnDef]:
        if not v:
            raise ValueError("a model needs at least one column")
        seen: set[str] = set()
        for c in v:
            if c.name.lower() in seen:
                raise ValueError(f"column {c.name!r} is defined twice")
            seen.add(c.name.lower())
        return v

    def all_columns(self) -> list[ColumnDef]:
        """Declared columns plus those Yao adds for ``option`` flags."""
        cols = list(self.columns)
        names = {c.name.lower() for c in cols}

        def add(name: str, type_: str) -> None:
            if name not in names:
                cols.append(ColumnDef(name=name, type=type_))
                names.add(name)

        if self.option.timestamps:
            add("created_at", "timestamp")
            add("updated_at", "timestamp")
        if self.option.soft_deletes:
            add("deleted_at", "timestamp")
        if self.option.permission:
            add("__yao_created_by", "string")
            add("__yao_updated_by", "string")
            add("__yao_team_id", "string")
        return cols


def load_model_file(path: Path, model_id: str) -> ModelDef:
    """Read one definition; errors name the file and the key."""
    data = read_jsonc(path)
    try:
        model = ModelDef.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, file=str(path), model=ModelDef) from exc
    return model.model_copy(update={"id": model_id, "file": str(path)})


def load_models_dir(models_dir: Path, prefix: str = "") -> dict[str, ModelDef]:
    """Every ``*.mod.yao`` under ``models_dir`` (recursively), by model id."""
    found: dict[str, ModelDef] = {}
    if not models_dir.is_dir():
        return found
    for path in sorted(models_dir.rglob(f"*{MODEL_SUFFIX}")):
        rel = path.relative_to(models_dir).as_posix()[: -len(MODEL_SUFFIX)]
        model_id = prefix + rel.replace("/", ".")
        found[model_id] = load_model_file(path, model_id)
    return found


def load_definitions(config_dir: Path | None, assistant_dir: Path | None) -> dict[str, ModelDef]:
    """Global models from ``<config_dir>/models`` and the assistant's own from
    ``<assistant_dir>/models`` (as ``agents.<folder name>.<name>``)."""
    models: dict[str, ModelDef] = {}
    if config_dir is not None:
        models.update(load_models_dir(Path(config_dir) / "models"))
    if assistant_dir is not None:
        adir = Path(assistant_dir)
        models.update(load_models_dir(adir / "models", f"agents.{adir.resolve().name}."))
    return models
