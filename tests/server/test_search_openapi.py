"""The OpenAPI operation of ``POST /v1/search`` is generated from the models, for the
handlers the service searches with: each type whose handler declares an options model
has its own request schema whose ``options`` are that model (the kb's ``collections``
and ``mode``, the db's ``models`` and ``dsl``, the web's ``sites``; a handler of yours
too), and the other types take the generic ``Request``."""

from __future__ import annotations

from typing import Any

from agent_search import Context, Request, Result, SearchConfig, Searcher
from agent_search._builtins import register_builtin_handlers
from agent_search.server._routes import document_routes
from agent_search.testing import StaticHandler
from agent_search.types import SearchOptions


class NewsOptions(SearchOptions):
    """A plug-in handler's own parameters."""

    region: str | None = None


class NewsHandler:
    type = "news"
    options_model = NewsOptions

    def can_handle(self, ctx: Context, request: Request) -> bool:
        return True

    async def search(self, ctx: Context, request: Request) -> Result:
        return Result(type="news", query=request.query)


def _document() -> dict[str, Any]:
    searcher = Searcher(SearchConfig())
    register_builtin_handlers(searcher.registry, searcher.config)
    searcher.registry.register(NewsHandler())
    searcher.registry.register(StaticHandler("plain"))  # declares no options model
    schema: dict[str, Any] = {"paths": {}}
    document_routes(schema, searcher.registry)
    return schema


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_each_handlers_request_shows_its_options() -> None:
    schema = _document()
    schemas = schema["components"]["schemas"]
    expected = {"kb": ("KBRequest", "KBOptions", {"collections", "mode", "wheres"}),
                "db": ("DBRequest", "DBOptions", {"models", "dsl", "wheres", "orders"}),
                "web": ("WebRequest", "WebOptions", {"sites", "time_range"}),
                "news": ("NewsRequest", "NewsOptions", {"region"})}
    for kind, (request, options, keys) in expected.items():
        properties = schemas[request]["properties"]
        assert properties["type"]["const"] == kind, request
        assert _ref(options) in properties["options"]["anyOf"], request
        assert keys <= set(schemas[options]["properties"]), options
        assert "query" in properties and "min_score" in properties
    assert "const" not in schemas["Request"]["properties"]["type"]  # any other type


def test_the_operation_takes_one_a_list_or_a_body_and_returns_results() -> None:
    operation = _document()["paths"]["/v1/search"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]["anyOf"]
    one = [_ref(n) for n in ("WebRequest", "KBRequest", "DBRequest", "NewsRequest",
                             "Request")]
    assert body == [*one, {"type": "array", "items": {"anyOf": one}}, _ref("SearchBody")]
    assert operation["security"] == [{"HTTPBearer": []}]
    assert operation["tags"] == ["search"]
    assert operation["description"].startswith("One Request")
    result = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert _ref("Result") in result["anyOf"]
    assert {"400", "401", "413", "422", "429"} <= set(operation["responses"])
