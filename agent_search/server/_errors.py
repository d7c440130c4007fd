"""JSON errors in the OpenAI shape (``{"error": {"message", "type", "param", "code"}}``),
so the official clients raise their usual exceptions with our message. Every refusal of
the service goes through :class:`ApiError`; nothing leaks a traceback to the caller."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("agent_search.server")

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large",
          415: "invalid_request_error", 422: "invalid_request_error",
          429: "rate_limit_error", 503: "service_unavailable"}


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = headers or {}


def error_body(status: int, message: str, *, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": _TYPES.get(status, "api_error"),
                      "param": param, "code": code}}


def error_response(status: int, message: str, *, param: str | None = None,
                   code: str | None = None, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse(error_body(status, message, param=param, code=code),
                        status_code=status, headers=headers)


def _location(loc: Any) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.message, param=exc.param, code=exc.code,
                              headers=exc.headers)

    async def invalid(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = list(exc.errors())
        first = errors[0] if errors else {"loc": (), "msg": "invalid request", "type": ""}
        where = _location(first.get("loc", ()))
        if first.get("type") == "json_invalid":
            return error_response(400, f"the body is not valid JSON: {first.get('msg')}",
                                  param="body", code="json_invalid")
        msg = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        return error_response(422, f"{where or 'body'}: {msg}", param=where or "body",
                              code=str(first.get("type") or "invalid"))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(exc.status_code, str(exc.detail),
                              headers=dict(exc.headers or {}))

    async def internal(_: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error")
        return error_response(500, f"internal error: {type(exc).__name__}")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, internal)
