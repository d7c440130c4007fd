"""``agent-search search TYPE QUERY`` — run one search and print its Result."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.markup import escape

from agent_search._locations import ENV_CONFIG, find_assistants_dir, find_config_dir
from agent_search.cli.app import app, check_identity, console, fail, plural, print_json
from agent_search.errors import AgentSearchError, validation_summary

if TYPE_CHECKING:
    from agent_search.searcher import Searcher
    from agent_search.types import QueryOrder, QueryWhere, Request, Result, ResultItem


def search_types(searcher: Searcher) -> list[str]:
    """The types ``search TYPE`` accepts: what the searcher's registry can search (the
    builtin ones and any registered handler, e.g. an ``agent_search.handlers`` plug-in)."""
    return searcher.registry.searchable_types


def did_you_mean(value: str, choices: Sequence[str]) -> str:
    """`` — did you mean 'web'?`` for a near miss of one of ``choices`` ("wbe"), else ""
    (:func:`agent_search.errors.did_you_mean`)."""
    from agent_search.errors import did_you_mean as hint

    return hint(value, choices)


def check_choice(flag: str, value: str | None, choices: Sequence[str]) -> None:
    """Exit 2 naming ``flag`` when ``value`` is not one of ``choices`` (none: any value)."""
    if value is not None and choices and value not in choices:
        *first, last = choices
        listed = f"{', '.join(first)} or {last}" if first else last
        fail(f"{flag} {value!r}: expected {listed}{did_you_mean(value, choices)}")


def check_limit(limit: int | None, max_limit: int) -> None:
    """The one wording of a bad ``--limit``, whatever the bound it misses."""
    if limit is not None and not 1 <= limit <= max_limit:
        fail(f"--limit {limit} is outside 1..{max_limit} (options.max_limit)")


def parse_where(text: str) -> QueryWhere:
    """``FIELD:OP:VALUE`` → QueryWhere. VALUE is JSON when it parses (numbers, lists,
    true/false/null), else a string; for ``in`` a comma-separated list is accepted."""
    from pydantic import ValidationError

    from agent_search.types import QueryWhere

    parts = text.split(":", 2)
    if len(parts) == 2 and parts[1].strip().lower() in _VALUELESS_OPS:
        parts.append("")
    if len(parts) != 3 or not parts[0].strip():
        raise ValueError(f"--where {text!r}: expected FIELD:OP:VALUE, e.g. price:<:100")
    field, op, raw = (p.strip() for p in parts)
    try:
        return QueryWhere(field=field, op=op, value=_where_value(op, raw))
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ValueError(f"--where {text!r}: {msg}") from exc


_VALUELESS_OPS = frozenset({"is null", "is not null", "null", "notnull"})
"""Operators written without a VALUE (``FIELD:is null``)."""


def _items(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _bounds(value: str) -> list[str]:
    return [v.strip() for v in value.split(",")]


_SPLIT_VALUE = {"in": _items, "not in": _items, "not_in": _items, "between": _bounds}
"""Operators whose VALUE, when not JSON, is a comma-separated list: the items of ``in``
(empty ones dropped), the two bounds of ``between`` (each kept as written)."""


def _where_value(op: str, raw: str) -> Any:
    """VALUE as JSON when it parses, else the string, split by :data:`_SPLIT_VALUE`."""
    value: Any
    try:
        value = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        value = raw
    split = _SPLIT_VALUE.get(op.lower())
    return split(value) if split is not None and isinstance(value, str) else value


def parse_order(text: str) -> QueryOrder:
    from agent_search.types import QueryOrder

    field, _, order = text.partition(":")
    order = order.strip().lower() or "desc"
    if not field.strip() or order not in ("asc", "desc"):
        raise ValueError(f"--order {text!r}: expected FIELD:asc or FIELD:desc")
    return QueryOrder(field=field.strip(), order=order)


def resolve_assistant(assistant: str | None, config_dir: Path | None = None) -> Path | None:
    """``--assistant``: a folder with a ``package.yao``, or an id in the assistants folder
    (see :mod:`agent_search._locations`), wherever the command runs."""
    if assistant is None:
        return None
    direct = Path(assistant)
    if (direct / "package.yao").is_file():
        return direct
    folder = find_assistants_dir(config_dir)
    if folder is None:
        raise ValueError(f"--assistant {assistant!r}: not an assistant folder, and no "
                         "assistants folder was found (--config, or run inside a project)")
    candidate = folder / assistant
    if not (candidate / "package.yao").is_file():
        from agent_search.errors import did_you_mean

        known = [p.parent.name for p in folder.glob("*/package.yao")]
        raise ValueError(f"--assistant {assistant!r}: no package.yao in {candidate}"
                         + did_you_mean(assistant, known))
    return candidate


def resolve_config_dir(config: Path | None) -> Path | None:
    """``--config``, else the configuration folder found from here (or None)."""
    if config is not None:
        if not config.is_dir():
            raise ValueError(f"--config {config}: not a folder")
        return config
    found = find_config_dir()
    if found is not None and not found.is_dir():
        raise ValueError(f"${ENV_CONFIG} {found}: not a folder")
    return found


def build_searcher(
    config: Path | None, assistant: str | None, overrides: dict[str, Any] | None = None
) -> Searcher:
    """The searcher a command uses; bad flags or configuration exit 2 with one line."""
    from agent_search.searcher import Searcher

    try:
        config_dir = resolve_config_dir(config)
        assistant_dir = resolve_assistant(assistant, config_dir)
        searcher = Searcher.from_config(config_dir, assistant_dir=assistant_dir,
                                        overrides=overrides, overrides_file="command line")
    except (ValueError, AgentSearchError) as exc:
        fail(str(exc))
    return searcher


def render_result(result: Result) -> None:
    from rich.table import Table

    title = (
        f"{result.type} search: {result.query!r} — {plural(len(result.items), 'item')}, "
        f"{result.duration_ms:.0f} ms"
    )
    if result.error:
        console.print(f"[red]✗ {title}[/red]\n[red]error:[/red] {result.error}")
        _render_notes(result)
        return
    table = Table(title=title, show_lines=False)
    table.add_column("ref", style="cyan", no_wrap=True)
    table.add_column("score", justify="right")
    table.add_column("title / content")
    table.add_column("where", overflow="fold")
    for item in result.items:
        where = item.url or (_kb_where(item) if item.collection else "")
        if item.model:
            where = f"{item.model}#{item.record_id}"
        snippet = " ".join(item.content.split())[:160]
        table.add_row(
            item.citation_id or "",
            f"{item.score:.3f}",
            f"[bold]{item.title or ''}[/bold]\n{snippet}",
            where,
        )
    console.print(table)
    _render_notes(result)


def _kb_where(item: ResultItem) -> str:
    """A kb item's file (and page), not its hashed document id; a record of a BEIR
    corpus file keeps its id, which names it there."""
    source = item.metadata.get("source")
    if not source:
        return f"{item.collection}/{item.document_id}"
    page = item.metadata.get("page")
    where = f"{item.collection}: {source}" + (f" p. {page}" if page else "")
    return f"{where} #{item.document_id}" if str(source).endswith(".jsonl") else where


def _render_notes(result: Result) -> None:
    """What the JSON output also says: the total, the database plan, every warning."""
    if result.dropped_below_floor:
        console.print(f"{result.dropped_below_floor} more under the relevance floor "
                      "(--min-score to change it)")
    if result.total > len(result.items):
        console.print(f"total: {plural(result.total, 'match', 'matches')}, "
                      f"{len(result.items)} shown")
    for plan in _plans(result.dsl):
        console.print(f"[cyan]plan:[/cyan] {escape(plan)}")
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    if result.rerank_error:
        console.print(f"[yellow]rerank:[/yellow] {escape(result.rerank_error)}")


def _plans(dsl: Any) -> list[str]:
    """The explanation a database search gave of what it understood."""
    if not isinstance(dsl, dict):
        return []
    if dsl.get("explanation"):
        return [str(dsl["explanation"])]
    queries = dsl.get("queries")
    return [str(q["explanation"]) for q in queries if isinstance(q, dict) and q.get("explanation")
            ] if isinstance(queries, list) else []


@app.command("search")
def search_command(
    search_type: Annotated[str, typer.Argument(
        metavar="TYPE", help="web, kb, db or a registered handler's type")],
    query: Annotated[str, typer.Argument(help="What to search for")],
    limit: Annotated[int | None, typer.Option("--limit", help="Max items")] = None,
    collection: Annotated[
        list[str] | None, typer.Option("--collection", "-c", help="KB collection")
    ] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Deprecated: --min-score")
    ] = None,
    graph: Annotated[bool, typer.Option("--graph", help="KB graph association")] = False,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", help="Relevance floor 0..1 (default: <type>.min_score; 0 = off)")
    ] = None,
    model: Annotated[list[str] | None, typer.Option("--model", help="DB model id")] = None,
    where: Annotated[
        list[str] | None, typer.Option("--where", help="DB filter FIELD:OP:VALUE")
    ] = None,
    order: Annotated[
        list[str] | None, typer.Option("--order", help="DB order FIELD:asc|desc")
    ] = None,
    site: Annotated[
        list[str] | None, typer.Option("--site", help="Web: restrict to a site")
    ] = None,
    time_range: Annotated[
        str | None, typer.Option("--time-range", help="Web: day, week, month or year")
    ] = None,
    db_url: Annotated[
        str | None, typer.Option("--db-url", help="Database URL (SQLAlchemy)")
    ] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="KB retrieval: hybrid, dense or sparse")
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Configuration folder")] = None,
    assistant: Annotated[
        str | None, typer.Option("--assistant", "-a", help="Assistant id or folder")
    ] = None,
    user: Annotated[str | None, typer.Option(
        "--user", help="Who is asking (user id for permission filters)")] = None,
    team: Annotated[str | None, typer.Option(
        "--team", help="The asker's team id (permission filters)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Result as JSON")] = False,
) -> None:
    """Run one search and print its Result (exit 1 if the search failed)."""
    from agent_search.registry import option_choices

    user, team = check_identity(user, "--user"), check_identity(team, "--team")
    searcher = build_searcher(config, assistant, {"db": {"url": db_url}} if db_url else None)
    types = search_types(searcher)
    if search_type not in types:
        fail(f"TYPE {search_type!r}: expected one of {', '.join(types)}"
             + did_you_mean(search_type, types))
    check_choice("--time-range", time_range,
                 option_choices(searcher.registry.options_model("web"), "time_range"))
    check_choice("--mode", mode, option_choices(searcher.registry.options_model("kb"), "mode"))
    check_limit(limit, searcher.config.options.max_limit)
    given = {"collections": collection, "graph": graph or None, "models": model,
             "sites": site, "time_range": time_range, "mode": mode}
    request = _request(where or [], order or [], type=search_type, query=query, limit=limit,
                       min_score=_floor(min_score, threshold),
                       options={k: v for k, v in given.items() if v})
    result = anyio.run(_search, searcher, request, user, team)
    if as_json:
        print_json(result.to_json())
    else:
        render_result(result)
    if result.error:
        raise typer.Exit(1)


def _request(where: list[str], order: list[str], **fields: Any) -> Request:
    """The Request of the command's options, ``--where`` and ``--order`` parsed; a bad
    one is a one-line error naming it (exit 2)."""
    from pydantic import ValidationError

    from agent_search.types import Request

    try:
        options = fields.pop("options")
        if where:
            options["wheres"] = [parse_where(w).to_json() for w in where]
        if order:
            options["orders"] = [parse_order(o).model_dump() for o in order]
        return Request(options=options, **fields)
    except ValidationError as exc:
        fail(validation_summary(exc))
    except ValueError as exc:
        fail(str(exc))


def _floor(min_score: float | None, threshold: float | None) -> float | None:
    """``--min-score``, or ``--threshold`` (its older name); both given must agree."""
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        fail(f"threshold {threshold} is outside 0..1")
    if threshold is None or min_score in (None, threshold):
        return threshold if min_score is None else min_score
    fail("--threshold is --min-score (the one relevance floor): give one")


async def _search(searcher: Searcher, request: Request, user: str | None,
                  team: str | None) -> Result:
    try:
        return await searcher.search(request, ctx=searcher.context(user_id=user, team_id=team))
    finally:
        await searcher.aclose()
