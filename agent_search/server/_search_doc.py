"""The OpenAPI operation of ``POST /v1/search``, generated from the models.

The route is a plain Starlette one (see :mod:`agent_search.server._routes`), so FastAPI
does not see it. Its operation is made the way FastAPI makes the others — an
:class:`~fastapi.routing.APIRoute` declared with the route's tags, security, response
model and errors, rendered by :func:`fastapi.openapi.utils.get_openapi` — never written
out by hand. The body is generated from the registry the service searches with: one
request model per search type whose handler declares an options model (``KBRequest``:
``type`` is ``"kb"``, ``options`` are the :class:`~agent_search.kb.handler.KBOptions`),
then the generic :class:`~agent_search.types.Request` for every other type; so a handler
of yours shows its options in the document as the built-in ones do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Union

from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field, TypeAdapter, create_model

from agent_search.registry import Registry
from agent_search.server._schemas import SearchBody
from agent_search.types import Request, Result

SEARCH_PATH = "/v1/search"
REF_TEMPLATE = "#/components/schemas/{model}"
_ERROR = {"description": "An error in the OpenAI shape ({\"error\": {...}})"}
ERROR_CODES = (400, 401, 413, 422, 429)
"""The statuses ``POST /v1/search`` answers with an error body."""


def request_models(registry: Registry) -> list[type[Request]]:
    """``Request`` with ``type`` fixed and ``options`` typed, for each search type of
    ``registry`` whose handler declares an options model, then ``Request`` itself (the
    types that declare none)."""
    typed: list[type[Request]] = []
    for search_type in registry.types:
        options = registry.options_model(search_type)
        if options is None:
            continue
        name = options.__name__.removesuffix("Options") or search_type.title()
        kind: Any = Literal[search_type]
        given: Any = options | None
        typed.append(create_model(
            f"{name}Request", __base__=Request,
            __doc__=f"A ``{search_type}`` search; ``options`` are its handler's "
                    f"{options.__name__}.",
            type=(kind, ...),
            options=(given, Field(default=None, description=(
                f"The {search_type} handler's parameters ({options.__name__})")))))
    return [*typed, Request]


def search_body(registry: Registry) -> Any:
    """The body ``POST /v1/search`` takes: one request, a list, or a :class:`SearchBody`
    (``requests``, ``merge``), with the requests typed by :func:`request_models`."""
    one = Union[tuple(request_models(registry))]  # type: ignore[valid-type]  # noqa: UP007
    many: type[BaseModel] = create_model(
        "SearchBody", __base__=SearchBody, __doc__=SearchBody.__doc__,
        requests=(list[one], Field(min_length=1)))  # type: ignore[valid-type]
    return one | list[one] | many  # type: ignore[valid-type]


def search_operation(registry: Registry, endpoint: Callable[..., Any],
                     extra: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The path item of ``POST /v1/search`` and the component schemas it names, for a
    service searching with ``registry``; ``endpoint`` gives the summary and description,
    ``extra`` is merged into the operation (its security)."""
    body = TypeAdapter(search_body(registry)).json_schema(ref_template=REF_TEMPLATE)
    schemas = body.pop("$defs", {})
    route = APIRoute(
        SEARCH_PATH, endpoint, methods=["POST"], tags=["search"],
        response_model=Result | list[Result],
        response_description="The Result, or the list of Results",
        responses={code: _ERROR for code in ERROR_CODES},
        openapi_extra={**extra, "requestBody": {
            "required": True, "content": {"application/json": {"schema": body}}}})
    document = get_openapi(title="search", version="0", routes=[route])
    schemas.update(document.get("components", {}).get("schemas", {}))
    return document["paths"][SEARCH_PATH], schemas
