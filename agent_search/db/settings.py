"""Typed settings of the ``db`` section of the configuration.

The core :class:`~agent_search.config.DBConfig` knows ``enabled``, ``models``, ``url`` and
``max_results``; this model validates the extra keys the db handler reads:

- ``wheres`` / ``orders``: preset filters and orders, ANDed (placed) before anything a
  generator produces, on every model searched (a model lacking a preset field is skipped
  with a warning rather than searched unfiltered);
- ``value_index_max``: a text column with at most this many distinct values is treated as
  categorical and its values are offered to the natural-language generator; the values of
  a bigger one are looked up at question time among the phrases of the question (see
  :mod:`agent_search.db._value_index`); 0 turns both off;
- ``retries``: how often a generator is asked again after giving an invalid DSL;
- ``read_only``: open the database read-only (SQLite ``mode=ro``, PostgreSQL
  ``default_transaction_read_only``), so no statement a search runs can write;
- ``statement_timeout_ms``: PostgreSQL statement timeout of search connections;
- ``count_max``: ``Result.total`` counts matches up to this many (a capped count stays
  cheap on big tables; beyond it ``total`` is ``count_max`` and a warning says so; 0 turns
  counting off: ``total`` is then the rows returned, plus one when more exist);
- ``count_asked_max``: the cap instead when the question asks how many (the DSL's
  ``total_asked``): the number is then the answer, so it is counted further.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from agent_search.config import DBConfig, SearchConfig, config_error
from agent_search.types import Count, QueryOrder, QueryWhere


class DBSettings(DBConfig):
    """Everything the db handler reads (the core's part, ``enabled`` / ``min_score`` /
    ``max_results`` / ``models`` / ``url``, is inherited from :class:`DBConfig`)."""

    model_config = ConfigDict(extra="forbid")
    section = "db"

    max_results: Count = Field(default=20, ge=1, le=10_000)
    wheres: list[QueryWhere] = Field(default_factory=list)
    orders: list[QueryOrder] = Field(default_factory=list)
    value_index_max: Count = Field(default=500, ge=0, le=100_000)
    retries: Count = Field(default=2, ge=0, le=10)
    read_only: bool = True
    statement_timeout_ms: Count = Field(default=10_000, ge=0)
    count_max: Count = Field(default=1_000, ge=0)
    count_asked_max: Count = Field(default=10_000_000, ge=0)
    match_by_meaning: bool = Field(
        default=True, description="Read leftover phrases as model/field names by meaning "
        "('cost' -> price; the offline MiniLM, loaded in the background from the first "
        "search or DBHandler.warm()), when name matching found nothing for them")

    @classmethod
    def from_config(cls, config: SearchConfig) -> DBSettings:
        """Validate ``config.db``; a bad value raises :class:`ConfigError` naming the key."""
        return config.db.settings(cls)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> DBSettings:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise config_error(exc, section="db", model=cls) from exc
