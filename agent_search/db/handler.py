"""The ``db`` search handler: natural language → QueryDSL → SQL on the requested models.

Steps of one search (each a trace span): load the catalog (``schema``, once), pick the
models (``options.models``, else ``db.models``, else every model with a warning), generate
the DSL (``dsl_build``: the generator named by ``uses.query``, builtin by default, or an
explicit DSL from ``request.options["dsl"]``), then run one SELECT per model
(``db_query``). Preset wheres/orders (``db.wheres``/``db.orders`` from config, then
``options.wheres``/``options.orders`` from the hook or caller) come first and generated
ones are ANDed/appended after them; the permission filter of
:mod:`agent_search.db._permissions` is added by the builder outside the DSL.

``request.options`` keys this handler reads (:class:`DBOptions`), besides ``models``,
``wheres``, ``orders`` and ``select``:

- ``dsl`` (object): a QueryDSL (or ``{"queries": [...]}``) to run instead of generating
  one; bounded with the other options (queries, depth, size as JSON), then validated
  like a generator's answer.
- ``generate`` (bool, default true): false runs only the preset wheres/orders.
- ``history`` (list of strings): the earlier user turns of a conversation, oldest first;
  the query is then read as their follow-up (:mod:`agent_search.query.followup`).

Item scores are on the project's absolute scale 0..1 (~0.5 = probably relevant), the
same for a row whatever its position or the size of the table:

    score = confidence × match

``confidence`` is the generator's: how sure the parse is (1.0 for exact value matches
and explicit DSL, about 0.8-0.9 for a fuzzy value match, 0.5 for a text match of words
it could not place), times ``0.5 + 0.5 × understood`` where ``understood`` is the share
of the question's content words it turned into conditions (words it dropped lower it;
each dropped word is also a warning). ``match`` is how much of the query the row matched:
1.0 for a row that satisfies every condition of a structured query; with ranking
``terms`` (a text match) the share of the terms the row contains as words
("work" is not in "Workstation"), rows containing none being dropped. Up to
``5 × limit`` (50..500) matching rows are read for that ranking. A DSL marked ``relax``
(the builtin generator marks a text match of words that modify the model's name, "music
genres", or, in a question naming no model, of words beside a known value that may say
what is sought, "laptops by Apex") that finds nothing is run again without its last
where, at half the confidence, with a warning; no other condition is ever dropped to
widen a search.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from pydantic import AfterValidator, Field, StrictBool

from agent_search._text import too_deep
from agent_search.config import SearchConfig
from agent_search.context import Context
from agent_search.db.models import ModelDef, load_definitions
from agent_search.db.settings import DBSettings
from agent_search.errors import ConfigError, InputError
from agent_search.query.dsl import (
    DSLGenerationError,
    DSLGenerator,
    DSLValidationError,
    GeneratedDSL,
    ModelSchema,
    QueryDSL,
    generate_dsl,
    validate_dsl,
)
from agent_search.registry import config_option
from agent_search.trace import span
from agent_search.types import (
    MAX_WHERE_CLAUSES,
    MAX_WHERE_DEPTH,
    QueryOrder,
    QueryWhere,
    Request,
    Result,
    ResultItem,
    SearchOptions,
)

if TYPE_CHECKING:  # imported where used: SQLAlchemy and the parser load on the first search
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent_search.db._catalog import Catalog, ModelEntry
    from agent_search.db._records import Scope
    from agent_search.query.nl import NameMeanings

MAX_MODEL_NAMES_IN_ERROR = 20
MAX_HISTORY_TURNS = 100
"""Most earlier turns ``options.history`` may hold (the last few are read)."""
MAX_DSL_QUERIES = 16
"""Most queries an explicit ``options.dsl`` may run (each one is a SELECT)."""
MAX_DSL_DEPTH = 2 * MAX_WHERE_DEPTH + 8
"""Deepest nesting of an explicit DSL: its where trees and the few levels around them."""
MAX_DSL_CHARS = 65_536
"""Largest explicit DSL, as JSON text (its clauses, terms and names are capped too)."""


def _check_dsl(dsl: dict[str, Any] | None) -> dict[str, Any] | None:
    """Bound an explicit DSL's size before the catalog is read or a query runs; its
    meaning is checked against the schemas later (:func:`validate_dsl`)."""
    if dsl is None:
        return None
    if too_deep(dsl, MAX_DSL_DEPTH):
        raise ValueError(f"nested deeper than {MAX_DSL_DEPTH} levels (where groups nest "
                         f"at most {MAX_WHERE_DEPTH} deep)")
    queries = dsl.get("queries")
    if isinstance(queries, list) and len(queries) > MAX_DSL_QUERIES:
        raise ValueError(f"{len(queries)} queries; the limit is {MAX_DSL_QUERIES}")
    size = len(json.dumps(dsl, default=str))
    if size > MAX_DSL_CHARS:
        raise ValueError(f"{size} characters as JSON; the limit is {MAX_DSL_CHARS}")
    return dsl


class DBOptions(SearchOptions):
    """The db handler's parameters (``request.options``; keys of other handlers are
    ignored), checked before the catalog is read or a connection opened; ``models``
    unset takes ``db.models``, filled once by the searcher (:meth:`filled`)."""

    models: list[str] | None = config_option(DBSettings, "models", "db.models")
    wheres: list[QueryWhere] | None = Field(default=None, max_length=MAX_WHERE_CLAUSES,
                                            description=(
        "preset filters, ANDed after db.wheres and before the generated ones"))
    orders: list[QueryOrder] | None = Field(default=None, max_length=MAX_WHERE_CLAUSES,
                                            description="preset orders, after db.orders")
    select: list[str] | None = Field(default=None, max_length=MAX_WHERE_CLAUSES,
                                     description="the fields each record shows")
    dsl: Annotated[dict[str, Any] | None, AfterValidator(_check_dsl)] = Field(
        default=None, description=(
            f"a QueryDSL (or {{'queries': [...]}}, at most {MAX_DSL_QUERIES}) to run instead "
            f"of generating one; at most {MAX_DSL_CHARS} characters as JSON"))
    generate: StrictBool | None = Field(default=None, description=(
        "false runs only the preset wheres/orders"))

    def filled(self, config: SearchConfig) -> DBOptions:
        if self.models is not None:
            return self
        return self.model_copy(update={"models": list(config.db.settings(DBSettings).models)})


class DBHandler:
    """Searches SQL databases through SQLAlchemy (SQLite via aiosqlite, PostgreSQL via
    asyncpg). Connects lazily on the first search; call :meth:`aclose` when done.

    Connection-level settings (``db.url``, ``read_only``, ``statement_timeout_ms``,
    ``value_index_max``, ``count_max``, ``retries``) are the handler's own; ``models``,
    ``max_results``, ``wheres`` and ``orders`` follow the configuration of each search's
    context (so an assistant's overrides apply)."""

    type = "db"
    reads_history = True
    options_model = DBOptions

    def __init__(self, config: SearchConfig, *, definitions: Mapping[str, ModelDef] | None = None,
                 generators: Mapping[str, DSLGenerator] | None = None,
                 engine: AsyncEngine | None = None) -> None:
        self.config = config
        self.settings = DBSettings.from_config(config)
        if self.settings.url:
            from agent_search.db._engine import async_url

            async_url(self.settings.url)  # a bad URL is a configuration error now, not later
        self.definitions = dict(definitions or {})
        if self.definitions:
            from agent_search.db._catalog import check_distinct_tables

            check_distinct_tables(self.definitions)
        if generators:
            warnings.warn("DBHandler(generators=...) is deprecated: give them to the "
                          "Searcher (Searcher(generators=...) or from_config), which hands "
                          "them to every search in ctx.deps", DeprecationWarning,
                          stacklevel=2)
        self.generators = dict(generators or {})
        """Deprecated (one release): generators reach a search in ``ctx.deps``."""
        self._engine = engine
        self._given_engine = engine is not None
        self._catalog: Catalog | None = None
        self._meanings: NameMeanings | None = None

    # -- lifecycle -------------------------------------------------------------------

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            from agent_search.db._engine import async_url, default_url, make_engine

            url = (async_url(self.settings.url) if self.settings.url
                   else default_url(Path(self.config.home)))
            self._engine = make_engine(url, read_only=self.settings.read_only,
                                       statement_timeout_ms=self.settings.statement_timeout_ms)
        return self._engine

    async def cache_version(self, ctx: Context, request: Request) -> str | None:
        """The database's state for the result cache: an SQLite file's size and change
        time (its write-ahead log's too); None (not cached) for a server database, whose
        changes this process cannot see."""
        if self._given_engine:
            return None  # an engine of the caller's own: its data is not ours to see
        from agent_search.db._engine import async_url, default_url

        url = (async_url(self.settings.url) if self.settings.url
               else default_url(Path(self.config.home)))
        if url.get_backend_name() != "sqlite" or not url.database \
                or url.database == ":memory:":
            return None
        return await anyio.to_thread.run_sync(_file_state, Path(url.database))

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            from agent_search.db._catalog import Catalog
            from agent_search.db._value_index import index_values

            engine, cap = self.engine, self.settings.value_index_max

            async def index(entry: ModelEntry) -> dict[str, list[str]]:
                return await index_values(engine, entry, cap)

            self._catalog = Catalog(engine, self.definitions, index=index)
        return self._catalog

    @property
    def meanings(self) -> NameMeanings | None:
        """Names by meaning (``db.match_by_meaning``), made on first use: building a
        handler (every CLI command does) loads neither the parser nor the model."""
        if self._meanings is None and self.settings.match_by_meaning:
            from agent_search.query.nl import NameMeanings

            self._meanings = NameMeanings.for_config(self.config)
        return self._meanings

    async def warm(self) -> None:
        """Get ready for the first question now (at start-up): the model of names by
        meaning loads in a background thread while the catalog is read and indexed, and
        this returns when both are done. Without it the first search starts both (and
        its first reading by meaning waits for the model, ~1 s)."""
        await self._start()
        if self.meanings is not None:
            await self.meanings.ready()

    async def _start(self) -> None:
        if self.meanings is not None:
            self.meanings.warm()
        await self.catalog.load()

    async def aclose(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()

    async def ping(self) -> None:
        """Raise if the database cannot be reached (the service's ``/readyz``)."""
        import sqlalchemy as sa

        async with self.engine.connect() as conn:  # the engine is built on first use
            await conn.execute(sa.select(sa.literal(1)))

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return request.type == self.type

    # -- search ----------------------------------------------------------------------

    async def search(self, ctx: Context, request: Request) -> Result:
        from sqlalchemy.exc import SQLAlchemyError

        from agent_search.db._builder import DSLBuildError
        from agent_search.db._rows import db_message

        try:
            return await self._search(ctx, request)
        except (ConfigError, InputError, DSLBuildError, DSLGenerationError) as exc:
            return _error(request, str(exc))
        except SQLAlchemyError as exc:
            return _error(request, f"database error: {db_message(exc)}")
        except OSError as exc:
            return _error(request, f"database error: {exc.strerror or exc}")

    async def _search(self, ctx: Context, request: Request) -> Result:
        from agent_search.db._builder import Caller
        from agent_search.db._records import Scope

        options = DBOptions.of(request).filled(ctx.config)  # before anything costs
        settings = ctx.config.db.settings(DBSettings)
        warnings: list[str] = []
        with span("schema"):
            await self._start()
        preset_wheres = [*settings.wheres, *(options.wheres or ())]
        preset_orders = [*settings.orders, *(options.orders or ())]
        entries = [e for e in self._pick_models(options.models or [], warnings)
                   if self._fits_preset(e, preset_wheres, preset_orders, warnings)]
        if not entries:
            return _error(request, "no model can be searched: " + "; ".join(warnings),
                          warnings)
        limit = _capped_limit(request.limit, settings.max_results, warnings)
        with span("dsl_build") as node:
            generated = await self._generate(ctx, request, options, entries, warnings)
            node.attributes["generator"] = generated.generator
        warnings.extend(generated.warnings)
        scope = Scope(catalog=self.catalog,
                      caller=Caller(ctx.user_id, ctx.team_id, presets=preset_wheres),
                      preset_orders=preset_orders,
                      select=list(options.select or ()), limit=limit,
                      count_max=self.settings.count_max,
                      count_asked_max=self.settings.count_asked_max,
                      warnings=warnings)
        with span("db_query") as node:
            items, total, executed = await self._run_queries(scope, entries, generated)
            node.attributes["rows"] = len(items)
        if len(items) > limit:  # several models: the best scores of all, not the first
            # model's (answer rows of an aggregate before records of the same score)
            items = sorted(items, key=_best_first)[:limit]
        dsl = {"queries": executed, "explanation": generated.explanation,
               "generator": generated.generator, "confidence": generated.confidence,
               "fallback": generated.fallback, "warnings": list(warnings)}
        return Result(type=self.type, query=request.query, items=items, total=total,
                      warnings=warnings, dsl=dsl)

    async def _run_queries(self, scope: Scope, entries: list[ModelEntry],
                           generated: GeneratedDSL
                           ) -> tuple[list[ResultItem], int, list[dict[str, Any]]]:
        """Each generated query on one connection: the items, the total of matching
        records, and the queries as executed."""
        items: list[ResultItem] = []
        executed: list[dict[str, Any]] = []
        total = 0
        by_id = {e.id.lower(): e for e in entries}
        async with self.engine.connect() as conn:
            for query in generated.queries:
                entry = by_id[query.model.lower()]
                q_items, q_total, q_json = await _run_query(
                    conn, scope, entry, query, generated.confidence)
                if generated.generator == "builtin" and q_items:  # right or silent
                    q_items, q_total = await _one_reading(conn, scope, entry, query,
                                                          q_items, q_total)
                items.extend(q_items)
                total += q_total
                executed.append(q_json)
        return items, total, executed

    # -- models ----------------------------------------------------------------------

    def _pick_models(self, models: list[str], warnings: list[str]) -> list[ModelEntry]:
        """``models`` (``options.models``, else ``db.models``), else every model (with a
        warning); a missing table or an unknown name is skipped with a warning, and an
        error when nothing is left."""
        wanted = list(models) or self._every_model(warnings)
        entries: list[ModelEntry] = []
        unknown: list[str] = []
        for model_id in wanted:
            entry = self.catalog.find(model_id)
            if entry is None:
                unknown.append(model_id)
            elif entry.missing:
                warnings.append(f"model {entry.id} skipped: {entry.missing}")
            elif entry not in entries:
                entries.append(entry)
        if unknown:
            self._unknown_models(unknown, searched=bool(entries), warnings=warnings)
        return entries

    def _every_model(self, warnings: list[str]) -> list[str]:
        wanted = [e.id for e in self.catalog.entries.values() if not e.missing]
        if not wanted:
            raise ConfigError("the database has no tables and no models are defined",
                              key="db.models")
        warnings.append(f"no models given (request.models, db.models); searched all "
                        f"{len(wanted)}")
        return wanted

    def _unknown_models(self, unknown: list[str], *, searched: bool,
                        warnings: list[str]) -> None:
        """Unknown names beside known ones are a warning; alone, an error listing what
        is known."""
        names = ", ".join(repr(u[:80]) for u in unknown)
        if searched:
            warnings.append(f"unknown model {names} skipped")
            return
        known = sorted(self.catalog.ids())
        more = "" if len(known) <= MAX_MODEL_NAMES_IN_ERROR else ", ..."
        raise ConfigError(f"unknown model {names}; known: "
                          f"{', '.join(known[:MAX_MODEL_NAMES_IN_ERROR])}{more}")

    def _fits_preset(self, entry: ModelEntry, wheres: Sequence[QueryWhere],
                     orders: Sequence[QueryOrder], warnings: list[str]) -> bool:
        """A preset filter must apply to a model, or the model is not searched (searching
        it unfiltered could show what the filter was meant to hide)."""
        if not wheres and not orders:
            return True
        schemas = [self._schema(entry, queryable=True), *self._related_schemas([entry])]
        raw = {"model": entry.id, "wheres": [w.to_json() for w in wheres],
               "orders": [o.model_dump() for o in orders]}
        try:
            validate_dsl(raw, schemas)
        except DSLValidationError as exc:
            warnings.append(f"model {entry.id} skipped: preset filter does not apply: {exc}")
            return False
        return True

    def _schema(self, entry: ModelEntry, *, queryable: bool) -> ModelSchema:
        return entry.schema.model_copy(update={"queryable": queryable})

    def _related_schemas(self, entries: Sequence[ModelEntry]) -> list[ModelSchema]:
        """The models the entries' relations point at, and (second hop, hasOne only:
        track → album → artist) the models those point at: one walk, breadth first."""
        ids = {e.id.lower() for e in entries}
        out: list[ModelSchema] = []
        frontier = [(e, True) for e in entries]  # (model, may its hasMany be followed)
        for _hop in range(2):
            reached: list[tuple[ModelEntry, bool]] = []
            for entry, any_kind in frontier:
                for target, has_one in self._new_targets(entry, any_kind, ids):
                    if target.id.lower() in ids:  # two relations to one model
                        continue
                    ids.add(target.id.lower())
                    out.append(self._schema(target, queryable=False))
                    if has_one:
                        reached.append((target, False))
            frontier = reached
        return out

    def _new_targets(self, entry: ModelEntry, any_kind: bool, ids: set[str]
                     ) -> list[tuple[ModelEntry, bool]]:
        """The models ``entry``'s relations point at (hasOne only unless ``any_kind``)
        that exist and are not among ``ids`` yet, each with whether it is a hasOne."""
        out = []
        for rel in entry.schema.relations:
            has_one = rel.type == "hasOne"
            target = self.catalog.find(rel.model) if any_kind or has_one else None
            if target is not None and not target.missing and target.id.lower() not in ids:
                out.append((target, has_one))
        return out

    # -- generation ------------------------------------------------------------------

    async def _generate(self, ctx: Context, request: Request, options: DBOptions,
                        entries: list[ModelEntry], warnings: list[str]) -> GeneratedDSL:
        from agent_search.query.nl import BuiltinDSLGenerator

        schemas = await self._schemas_with_values(entries)
        if options.dsl is not None:
            return validate_dsl(options.dsl, schemas, generator="explicit")
        if options.generate is False:
            return GeneratedDSL(queries=[QueryDSL(model=e.id) for e in entries],
                                explanation="preset filters only", generator="none")
        earlier = _earlier_turns(request.options.get("history"))
        schemas = await self._with_named_values(schemas, " ".join([*earlier, request.query]))
        builtin = BuiltinDSLGenerator(strict=ctx.config.query.strict, meanings=self.meanings)
        generator = self._generator(ctx, builtin, warnings)
        if earlier:  # a follow-up: read in the context of the earlier turns
            from agent_search.query.followup import FollowUpGenerator

            deterministic = isinstance(generator, BuiltinDSLGenerator)
            generator = FollowUpGenerator(generator, earlier)
            if deterministic:
                return await generate_dsl(generator, request.query, schemas, retries=0)
        if isinstance(generator, BuiltinDSLGenerator):  # deterministic: asking again
            return await generate_dsl(generator, request.query, schemas, retries=0)
        try:
            return await generate_dsl(generator, request.query, schemas,
                                      retries=self.settings.retries)
        except DSLGenerationError as exc:
            if ctx.config.query.strict:
                raise
            warnings.append(f"{exc}; used the builtin generator")
            return await generate_dsl(builtin, request.query, schemas, retries=0)

    async def _schemas_with_values(self, entries: list[ModelEntry]) -> list[ModelSchema]:
        """The entries' schemas (queryable) and their related models' (reachable only
        through a relation), read with the value index: it also tells which text columns
        hold numbers (compared as numbers on every path, an explicit DSL's too)."""
        schemas = [await self.catalog.schema_with_values(e, queryable=True) for e in entries]
        for related in self._related_schemas(entries):
            target = self.catalog.find(related.id)
            assert target is not None
            schemas.append(await self.catalog.schema_with_values(target, queryable=False))
        return schemas

    async def _with_named_values(self, schemas: list[ModelSchema],
                                 question: str) -> list[ModelSchema]:
        """The schemas with the values the question names in columns too big to index,
        looked up now (one bounded query per model that has such columns; phrases that are
        already a known value of an indexed column are not): offered for this question
        only, as if indexed."""
        from agent_search.db._value_index import named_values

        entries = [self.catalog.find(s.id) for s in schemas]
        if not any(e is not None and e.looked_up for e in entries):
            return schemas
        known = frozenset(v.lower() for s in schemas for f in s.fields for v in f.values)
        out: list[ModelSchema] = []
        async with self.engine.connect() as conn:
            for schema, entry in zip(schemas, entries, strict=True):
                found = await named_values(conn, entry, question, known) if entry else {}
                out.append(_with_values(schema, found))
        return out

    def _generator(self, ctx: Context, builtin: DSLGenerator,
                   warnings: list[str]) -> DSLGenerator:
        """The generator ``uses.query`` names, from one table: ``builtin``, then the run's
        (``ctx.deps.generators``: the searcher's, an assistant's delegate), a later one
        winning (and, for one release, the handler's deprecated own between them). A name
        in none of them is an error in strict mode, else the builtin with a warning."""
        name = ctx.config.uses.query
        table: dict[str, DSLGenerator] = {"builtin": builtin, **self.generators,
                                          **ctx.deps.generators}
        found = table.get(name)
        if found is not None:
            return found
        message = (f"query generator {name!r} (uses.query) is not available; "
                   "give it to the Searcher (Searcher(generators=...))")
        if ctx.config.query.strict:
            raise DSLGenerationError(message)
        warnings.append(message + "; used the builtin generator")
        return builtin


def _capped_limit(asked: int | None, most: int, warnings: list[str]) -> int:
    """The search's limit (filled by the searcher), capped at ``db.max_results`` with a
    warning."""
    limit = asked or most
    if limit > most:
        warnings.append(f"limit {limit} capped at {most} (db.max_results)")
        return most
    return limit


def _best_first(item: ResultItem) -> tuple[float, bool]:
    """Sort key: higher score first; an aggregate's answer row before a record."""
    return -item.score, item.metadata.get("kind") != "aggregate"


def _earlier_turns(raw: Any) -> list[str]:
    """``options.history``: the earlier user turns of a conversation (oldest first), as
    the agent runtime passes them; anything else is a validation error."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_HISTORY_TURNS \
            or not all(isinstance(t, str) for t in raw):
        raise DSLValidationError(f"options.history must be a list of at most "
                                 f"{MAX_HISTORY_TURNS} strings (the earlier user turns, "
                                 "oldest first)")
    from agent_search.query.followup import MAX_EARLIER_TURNS, MAX_TURN_CHARS

    return [t[:MAX_TURN_CHARS] for t in raw if t.strip()][-MAX_EARLIER_TURNS:]


def _with_values(schema: ModelSchema, found: Mapping[str, list[str]]) -> ModelSchema:
    """A copy of ``schema`` whose fields also know the ``found`` values (the schema as it
    is when nothing was found: cached objects stay shared)."""
    if not found:
        return schema
    fields = [f.model_copy(update={"values": sorted({*f.values, *found[f.name]})})
              if f.name in found else f for f in schema.fields]
    return schema.model_copy(update={"fields": fields})


async def _run_query(conn: Any, scope: Scope, entry: ModelEntry, query: QueryDSL,
                     confidence: float) -> tuple[list[ResultItem], int, dict[str, Any]]:
    """One generated query: an aggregate's answer rows first, then (for any query) a
    sample of the records it covers; ``(items, total, the query as executed)``. Groups
    under a condition (``having``) none of which meets it cover no record: nothing is
    shown ("hometowns shared by at least two teachers" when none is shared), not every
    record under the other conditions."""
    from agent_search.db._aggregate import run_aggregate
    from agent_search.db._records import run_records

    answers: list[ResultItem] = []
    a_json: dict[str, Any] = {}
    if query.is_aggregate:
        answers, a_json = await run_aggregate(conn, scope, entry, query, confidence)
        query = query.model_copy(update={"group_by": [], "aggregates": [], "having": [],
                                         "orders": [], "limit": None})
    items, total, executed = await run_records(conn, scope, entry, query, confidence)
    if a_json.get("having") and not answers:  # no group meets it: no record does either
        items, total = [], 0
    if answers or a_json.get("having"):
        executed.update(a_json)
    return [*answers, *items], total, executed


async def _one_reading(conn: Any, scope: Scope, entry: ModelEntry, query: QueryDSL,
                       items: list[ResultItem], total: int) -> tuple[list[ResultItem], int]:
    """``items`` and ``total``, or none when the builtin reading of a value in two fields
    gives other rows in each (:mod:`agent_search.db._readings`): a guess between two
    answers is worse than none."""
    from agent_search.db._readings import either_differs

    reason = await either_differs(conn, scope.catalog, entry, scope.caller,
                                  [*scope.caller.presets, *query.wheres])
    if reason is None:
        return items, total
    scope.warnings.append(f"model {entry.id}: {reason}")
    return [], 0


def _error(request: Request, message: str, warnings: list[str] | None = None) -> Result:
    line = " ".join(message.split())
    return Result(type="db", query=request.query, error=line, warnings=warnings or [])


def create_handler(config: SearchConfig, *, config_dir: Path | None = None,
                   assistant_dir: Path | None = None,
                   generators: Mapping[str, DSLGenerator] | None = None) -> DBHandler:
    """The ``db`` handler for ``config``: global models from ``<config_dir>/models``,
    assistant models from ``<assistant_dir>/models`` (``agents.<id>.<name>``), every other
    table of ``db.url`` (default: SQLite at ``<home>/agent.db``) by reflection.
    ``generators`` (deprecated: give them to the Searcher, which hands them to every
    search in ``ctx.deps``) adds NL → DSL generators selectable by ``uses.query``."""
    definitions = load_definitions(Path(config_dir) if config_dir else None,
                                   Path(assistant_dir) if assistant_dir else None)
    return DBHandler(config, definitions=definitions, generators=generators)


def _file_state(path: Path) -> str | None:
    """Size and change time of ``path`` and its ``-wal`` file (None when it is missing)."""
    parts = []
    for file in (path, path.with_name(path.name + "-wal")):
        try:
            st = file.stat()
        except OSError:
            if file is path:
                return None
            continue
        parts.append(f"{st.st_size}:{st.st_mtime_ns}")
    return "/".join(parts)
