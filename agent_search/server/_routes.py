"""The endpoints. Before any ``/v1/`` route runs, the middleware has identified the caller
(401) and taken a rate-limit token (429) (:class:`~._middleware.Authenticate`); each route
validates (400/413/422), then runs with the caller's identity driving every permission
filter. Request ids are made here, never taken from the caller."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
from collections.abc import Awaitable, Iterator, Sequence
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from agent_search._config_files import BUILTIN_TYPES
from agent_search._paging import (
    DEFAULT_LIMIT,
    MAX_CURSOR,
    MAX_LIMIT,
    CursorError,
    make_cursor,
    read_cursor,
)
from agent_search._text import MAX_JSON_DEPTH, check_tree, may_hold_surrogates, too_deep
from agent_search.agent import Assistant, Options, validate_conversation
from agent_search.registry import Registry
from agent_search.server._auth import Identity
from agent_search.server._errors import ApiError
from agent_search.server._metrics import CONTENT_TYPE
from agent_search.server._middleware import identity_of
from agent_search.server._schemas import (
    ChatCompletionRequest,
    ChatMessage,
    ResearchBody,
    SearchBody,
    StreamRequest,
)
from agent_search.server._search_doc import REF_TEMPLATE, SEARCH_PATH, search_operation
from agent_search.server._sse import EventStreamResponse, Write
from agent_search.server._streams import (
    ChatFormat,
    collect_chat,
    message_text,
    native_stop_frame,
    write_chat,
    write_native,
)
from agent_search.server.service import Service
from agent_search.trace import first_line
from agent_search.types import Request as RequestModel
from agent_search.types import Result, legacy_fields, legacy_note

T = TypeVar("T")
B = TypeVar("B", bound=BaseModel)
router = APIRouter()
BEARER_SCHEME = {"type": "http", "scheme": "bearer",
                 "description": "An API key from config/agent.yml"}
"""The OpenAPI security scheme of the ``/v1/`` routes (``components.securitySchemes``
gets it from the app); the key is checked by the middleware, not by a dependency."""
_SECURED: dict[str, Any] = {"security": [{"HTTPBearer": []}]}
_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_READY_TIMEOUT = 5.0
_RESULT = TypeAdapter(Result)
_RESULTS = TypeAdapter(list[Result])
"""Results straight to JSON bytes (pydantic's encoder, one pass)."""


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def until_disconnect(request: Request, work: Awaitable[T]) -> T:
    """Run ``work`` in this task; cancel it if the client disconnects first (the body has
    been read, so what ``receive`` yields next is the disconnect; 499 then).

    The watcher is a bare asyncio task, not a task in an anyio task group: the group
    (spawn, then cancelling the watcher: anyio formats the current task into the cancel
    reason) cost ~0.15 ms per request, ten times this. uvicorn runs the app on asyncio."""
    with anyio.CancelScope() as scope:
        watcher = asyncio.get_running_loop().create_task(_cancel_on_disconnect(request, scope))
        try:
            return await work
        finally:
            watcher.cancel()
    raise ApiError(499, "the client closed the request")


async def _cancel_on_disconnect(request: Request, scope: anyio.CancelScope) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


_DOCUMENTED_BODIES: list[type[BaseModel]] = []


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that parses ``model`` itself (see
    :func:`_validate`); :func:`document_routes` adds the model's schema."""
    _DOCUMENTED_BODIES.append(model)
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


def _messages(service: Service, messages: list[ChatMessage]) -> list[dict[str, Any]]:
    cap = service.settings.max_messages
    if len(messages) > cap:
        raise ApiError(422, f"messages: {len(messages)} messages; the limit is {cap}",
                       param="messages", code="too_many_messages")
    out = [m.model_dump(exclude_none=True) for m in messages]
    try:  # a question of only spaces: said now, not after the stream's 200 went out
        return validate_conversation(out)
    except ValueError as exc:
        raise ApiError(422, str(exc), param="messages", code="empty_question") from None


def _options(identity: Identity, search: bool | None, research: bool = False) -> Options:
    """Options of a new stream under the caller's identity, with a request id of ours."""
    return Options(search=search, user_id=identity.user_id, team_id=identity.team_id,
                   request_id=secrets.token_hex(12), research=research)


@contextlib.contextmanager
def _running(service: Service, identity: Identity, options: Options) -> Iterator[None]:
    """One stream in flight: counted, and its record to be stored as the caller's."""
    assert options.request_id is not None
    service.records.expect(options.request_id, identity.owner)
    try:
        with service.stream_slot():
            yield
    finally:
        service.records.forget(options.request_id)


def _check_tools(body: ChatCompletionRequest, assistant: Assistant) -> None:
    """Tools run on the server: a request may name the ones its assistant enables (the
    ``search`` tool), no others; ``tool_choice`` may only leave the choice to the model."""
    enabled = assistant.tools
    for i, tool in enumerate(body.tools or []):
        if tool.function.name not in enabled:
            allowed = ", ".join(sorted(enabled)) or "none"
            raise ApiError(400, f"tools[{i}].function.name: {tool.function.name[:64]!r} is "
                           f"not a tool of assistant {assistant.id!r} (enabled: {allowed})",
                           param=f"tools[{i}].function.name", code="unknown_tool")
    if body.tool_choice not in (None, "auto"):
        raise ApiError(400, "tool_choice: only 'auto' is supported (the assistant runs its "
                       "tools itself)", param="tool_choice")


@router.post("/v1/chat/completions", tags=["chat"],
             openapi_extra={**_SECURED, **_body_doc(ChatCompletionRequest)})
async def chat_completions(request: Request) -> Any:
    """OpenAI-compatible chat with auto search and citations; ``model`` = assistant id.
    References come as extra fields (``references``, ``citations``, ``request_id``) on
    the response, or on the last chunk when streaming."""
    identity = identity_of(request.scope)
    service = service_of(request)
    body = _validate(ChatCompletionRequest, await _json_body(request))
    assistant = service.assistant(body.model)
    _check_tools(body, assistant)
    messages = _messages(service, body.messages)
    service.admit()
    options = _options(identity, body.search, body.research)
    assert options.request_id is not None
    fmt = ChatFormat(options.request_id, assistant.id, prompt=message_text(messages))
    headers = {"X-Request-Id": options.request_id}
    if not body.stream:
        with _running(service, identity, options):
            outcome = await until_disconnect(
                request, collect_chat(service, assistant, messages, options))
        if outcome.error and not outcome.text:
            raise ApiError(502, outcome.error, code="stream_failed", headers=headers)
        return Response(json.dumps(fmt.completion(outcome), ensure_ascii=True),
                        media_type="application/json", headers=headers)

    async def produce(write: Write) -> None:
        with _running(service, identity, options):
            await write_chat(service, assistant, messages, options, fmt, write,
                             include_usage=body.include_usage)

    return EventStreamResponse(produce, stop=service.stop_streams, on_stop=fmt.stop_frames,
                               on_error=fmt.stop_frames,
                               keepalive=service.settings.keepalive_seconds, headers=headers)


@router.post("/v1/assistants/{assistant_id}/stream", tags=["chat"],
             openapi_extra={**_SECURED, **_body_doc(StreamRequest)})
async def assistant_stream(request: Request,
                           assistant_id: Annotated[str, Path(max_length=200)]) -> Any:
    """The native output events as SSE: ``event:`` the name, ``data:`` the event JSON
    (search_start, search_result, search_complete, text, citations, done)."""
    identity = identity_of(request.scope)
    service = service_of(request)
    body = _validate(StreamRequest, await _json_body(request))
    assistant = service.assistant(assistant_id, param="assistant_id")
    messages = _messages(service, body.messages)
    service.admit()
    options = _options(identity, body.search, body.research)
    assert options.request_id is not None
    request_id = options.request_id

    async def produce(write: Write) -> None:
        with _running(service, identity, options):
            await write_native(service, assistant, messages, options, write)

    return EventStreamResponse(produce, stop=service.stop_streams,
                               on_stop=lambda: native_stop_frame(request_id),
                               on_error=lambda error: native_stop_frame(request_id, error),
                               keepalive=service.settings.keepalive_seconds,
                               headers={"X-Request-Id": request_id})


async def search(request: Request) -> Response:
    """One Request → its Result JSON; a list of Requests, or ``{"requests": [...],
    "merge": bool}`` → the list of Results (run in parallel), or one merged Result."""
    identity = identity_of(request.scope)
    service = service_of(request)
    raw, single = _search_body(await _json_body(request), service.settings.max_searches)
    body = _validate(SearchBody, raw, single_request=single)
    notes = deprecation_notes(raw, single=single)
    searcher = service.searcher
    _check_types(body.requests, [*BUILTIN_TYPES, *searcher.registry.types], single=single)
    ctx = searcher.context(user_id=identity.user_id, team_id=identity.team_id)
    results = await until_disconnect(request, searcher.search_many(body.requests, ctx=ctx))
    for result in results:
        service.metrics.observe_search(result.type, result.error, result.duration_ms)
    headers = {"X-Request-Id": ctx.request_id}
    if notes:
        headers["Warning"] = ", ".join(f'299 agent-search "{note}"' for note in notes)
    if body.merge:
        content = _dump(_RESULT, await searcher.merge(results, ctx=ctx))
    else:
        content = _dump(_RESULT, results[0]) if single else _dump(_RESULTS, results)
    return Response(content, media_type="application/json", headers=headers)


def _search_body(raw: Any, cap: int) -> tuple[Any, bool]:
    """The body of ``POST /v1/search`` in the ``{"requests": [...]}`` shape, and whether
    it was one request; more than ``cap`` searches is a 422 before validation."""
    single = isinstance(raw, dict) and "requests" not in raw
    if isinstance(raw, list):
        raw = {"requests": raw}
    elif single:
        raw = {"requests": [raw]}
    requests = raw.get("requests") if isinstance(raw, dict) else None
    if isinstance(requests, list) and len(requests) > cap:
        raise ApiError(422, f"requests: {len(requests)} searches; the limit is {cap}",
                       param="requests", code="too_many_searches")
    return raw, single


def deprecation_notes(raw: dict[str, Any], *, single: bool) -> list[str]:
    """One line per deprecated field of the requests in ``raw`` (the body as validated),
    naming where it is (``requests[1]: ...`` in a list): the response's ``Warning``
    header (code 299, as Kubernetes' API server warns of deprecated use), since an HTTP
    client sees no Python warning."""
    notes = []
    for n, req in enumerate(raw["requests"]):
        where = "" if single else f"requests[{n}]: "
        notes += [where + legacy_note(name) for name in legacy_fields(req)]
    return notes


def _check_types(requests: Sequence[RequestModel], known: Sequence[str], *,
                 single: bool) -> None:
    """A search type that is none of the built-in ones nor a registered handler's is
    the caller's mistake, said before anything runs (422, with the type it is likely a
    typo of), not a 200 whose Result holds an error. A built-in type this service does
    not serve (web search without its key) stays a Result saying why."""
    from agent_search.errors import did_you_mean

    for n, req in enumerate(requests):
        if req.type not in known:
            param = "type" if single else f"requests[{n}].type"
            names = list(dict.fromkeys(known))
            raise ApiError(422, f"{param}: unknown search type {req.type[:40]!r}; known: "
                           f"{', '.join(names)}{did_you_mean(req.type[:40], names)}",
                           param=param, code="unknown_search_type")


@router.post("/v1/research", tags=["search"],
             openapi_extra={**_SECURED, **_body_doc(ResearchBody)})
async def research(request: Request) -> Response:
    """A question researched in rounds of searches under the caller's identity: the
    parts, each one's coverage and citations, the rounds, the references and why it
    stopped (``ResearchResult`` JSON). Budgets in the body can only lower the server's."""
    identity = identity_of(request.scope)
    service = service_of(request)
    body = _validate(ResearchBody, await _json_body(request))
    searcher = service.searcher
    ctx = searcher.context(user_id=identity.user_id, team_id=identity.team_id)
    limits = ctx.config.research
    lowered = {k: min(v, getattr(limits, k)) for k, v in
               (("max_rounds", body.max_rounds), ("max_searches", body.max_searches),
                ("deadline", body.deadline)) if v is not None}
    unknown = [t for t in body.types if t not in searcher.registry.types]
    if unknown:
        raise ApiError(422, f"types: unknown search type {unknown[0]!r}", param="types")
    report = await until_disconnect(request, searcher.research(
        body.question, ctx=ctx, types=body.types, settings=lowered, limit=body.limit))
    return Response(report.model_dump_json(), media_type="application/json",
                    headers={"X-Request-Id": ctx.request_id})


def _dump(adapter: TypeAdapter[Any], value: Any) -> bytes:
    """JSON bytes of a result; a lone surrogate in result content (a provider's or a
    document's ``"\ud800"``: not text) is written as its JSON escape instead of failing
    pydantic's UTF-8 encoder with a 500."""
    try:
        return adapter.dump_json(value)
    except PydanticSerializationError:
        return json.dumps(adapter.dump_python(value, mode="json"), ensure_ascii=True).encode()


# A plain Starlette route, not a FastAPI one: it parses and validates its body itself
# (the bound on the number of searches comes before validation), so FastAPI's request
# handling (dependency solving, body reading, response checks) would only add ~60 µs a
# call — ~0.3 ms on a machine whose caches other work keeps cold, against a 3 ms budget.
# The OpenAPI document gets the operation from :mod:`agent_search.server._search_doc`.
router.add_route("/v1/search", search, methods=["POST"], include_in_schema=False)


def document_routes(schema: dict[str, Any], registry: Registry) -> None:
    """Add to an OpenAPI document made by FastAPI what it cannot see: the schemas of the
    bodies routes parse themselves, and ``POST /v1/search`` (a plain route), generated
    for the handlers of ``registry`` (each type's options model)."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in _DOCUMENTED_BODIES:
        definition = model.model_json_schema(ref_template=REF_TEMPLATE)
        for name, nested in definition.pop("$defs", {}).items():
            schemas.setdefault(name, nested)
        schemas[model.__name__] = definition
    operation, defined = search_operation(registry, search, _SECURED)
    for name, definition in defined.items():
        schemas.setdefault(name, definition)
    schema.setdefault("paths", {})[SEARCH_PATH] = operation


@router.get("/v1/models", tags=["chat"], openapi_extra=_SECURED)
async def models(request: Request) -> dict[str, Any]:
    """The assistants, as OpenAI models (``id`` = assistant id)."""
    identity_of(request.scope)
    service = service_of(request)
    return {"object": "list", "data": [
        {"id": a.id, "object": "model", "created": 0, "owned_by": "agent-search",
         "name": a.package.name, "description": a.package.description,
         "examples": list(a.package.examples),
         "citation_format": a.searcher.config.citation.format,
         "kb_collections": list(a.searcher.config.kb.collections)}
        for a in service.assistants.values()]}


@router.get("/v1/records", tags=["records"], openapi_extra=_SECURED)
async def records(
        request: Request,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
        cursor: Annotated[str | None, Query(max_length=MAX_CURSOR)] = None) -> dict[str, Any]:
    """A page of the caller's search records, newest first (request id, assistant,
    time; the record is ``GET /v1/records/{request_id}``): at most ``limit`` (≤ 1000),
    and ``next_cursor`` to pass as ``cursor`` for the next page (null on the last); 422
    for a cursor of another caller's listing."""
    identity = identity_of(request.scope)
    scope = ("records", identity.owner)
    before = None
    if cursor is not None:
        try:
            at = read_cursor(cursor, scope)
            before = (float(at["t"]), str(at["r"]))
            if not _REQUEST_ID.fullmatch(before[1]):
                raise CursorError("cursor: not a position in this listing")
        except (ValueError, KeyError, TypeError) as exc:  # CursorError is a ValueError
            raise ApiError(422, str(exc) if isinstance(exc, CursorError) else
                           "cursor: not a position in this listing", param="cursor") from None
    rows = await service_of(request).records.list_owned(identity.owner, limit, before)
    last = rows[-1] if len(rows) == limit else None
    return {"records": rows, "next_cursor": make_cursor(
        scope, {"t": last["created_at"], "r": last["request_id"]}) if last else None}


@router.get("/v1/records/{request_id}", tags=["records"], openapi_extra=_SECURED)
async def record(request: Request,
                 request_id: Annotated[str, Path(max_length=64)]) -> dict[str, Any]:
    """The search record of a stream the caller made (404 for anyone else's)."""
    identity = identity_of(request.scope)
    if not _REQUEST_ID.fullmatch(request_id):
        raise ApiError(422, "request_id: letters, digits, '_' or '-' only",
                       param="request_id")
    found = await service_of(request).records.get_owned(request_id, identity.owner)
    if found is None:
        raise ApiError(404, f"no search record {request_id!r} of yours (it may still be "
                       "running)", param="request_id")
    return found.to_dict()


@router.get("/healthz", tags=["ops"])
async def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz", tags=["ops"])
async def readyz(request: Request) -> JSONResponse:
    """Readiness: the knowledge base store, the databases and the record store answer."""
    service = service_of(request)
    checks: dict[str, str] = {}

    async def check(name: str, probe: Awaitable[Any]) -> None:
        try:
            with anyio.fail_after(_READY_TIMEOUT):
                await probe
            checks[name] = "ok"
        except TimeoutError:
            checks[name] = f"timed out after {_READY_TIMEOUT:.0f} s"
        except Exception as exc:
            checks[name] = first_line(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(check, "records", service.records.ping())
        for name, handler in _pinged(service.searcher.registry):
            tg.start_soon(check, name, handler.ping())
    ready = not service.draining and all(v == "ok" for v in checks.values())
    status = "ready" if ready else ("draining" if service.draining else "not ready")
    return JSONResponse({"status": status, "checks": checks}, status_code=200 if ready else 503)


@router.get("/metrics", tags=["ops"])
async def metrics(request: Request) -> Response:
    """Prometheus text format."""
    return Response(service_of(request).metrics.render(), media_type=CONTENT_TYPE)


def _pinged(registry: Registry) -> list[tuple[str, Any]]:
    """The registered handlers that offer ``async ping()`` (kb, db, one of yours), each
    once, named by type (``db``, ``db1``… for a type with several)."""
    seen: set[int] = set()
    out: list[tuple[str, Any]] = []
    for search_type in registry.types:
        handlers = [h for h in registry.handlers(search_type)
                    if callable(getattr(h, "ping", None)) and id(h) not in seen]
        for i, handler in enumerate(handlers):
            seen.add(id(handler))
            out.append((f"{search_type}{i or ''}", handler))
    return out


async def _json_body(request: Request) -> Any:
    """The parsed body; 400 for what is not JSON, or JSON we refuse to look further into:
    nested deeper than :data:`MAX_JSON_DEPTH` (the parser's own recursion limit used to
    end in a 500) or holding a lone surrogate (not text: it failed when the answer was
    serialised). Both checked here, once, for every route that reads a body; a body over
    :data:`_THREAD_BODY_BYTES` is parsed and checked in a worker thread (a 1 MB array
    took ~0.1 s to parse on a busy machine: not on the event loop)."""
    body = await request.body()
    if len(body) > _THREAD_BODY_BYTES:
        return await anyio.to_thread.run_sync(_parse_body, body)
    return _parse_body(body)


_THREAD_BODY_BYTES = 64 * 1024


def _parse_body(body: bytes) -> Any:
    try:
        raw = json.loads(body)
    except RecursionError:
        raise ApiError(400, f"body: nested deeper than {MAX_JSON_DEPTH} levels",
                       param="body", code="json_too_deep") from None
    except ValueError as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}", param="body",
                       code="json_invalid") from None
    if too_deep(raw):  # within the parser's limit, but deeper than any request needs
        raise ApiError(400, f"body: nested deeper than {MAX_JSON_DEPTH} levels",
                       param="body", code="json_too_deep")
    problem = check_tree(raw) if may_hold_surrogates(body) else None
    if problem:
        raise ApiError(400, problem, param=problem.split(":")[0][:200], code="invalid_text")
    return raw


def _validate(model: type[B], raw: Any, *, single_request: bool = False) -> B:
    """``raw`` (parsed JSON) as ``model``, validated as FastAPI would validate a body
    parameter (Python mode on the parsed JSON); the first error as a 422 naming its
    field. Routes parse their bodies themselves: FastAPI's body handling cost more per
    request than the validation itself."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        if single_request and loc[:2] == ["requests", "0"]:
            loc = loc[2:]  # a single request: name its own field
        where = ".".join(loc) or "body"
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise ApiError(422, f"{where}: {msg}", param=where, code=str(err["type"])) from None
