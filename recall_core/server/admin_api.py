"""The admin JSON API under /admin (a FastAPI app; server/app.py mounts it).

Bearer admin tokens only: a missing or unknown token gets 401, a namespace token 403 (it is a
credential of another kind, and never reaches these routes). OpenAPI document at
/admin/openapi.json. Request validation errors are FastAPI's 422 with its documented body;
every other error is `{"error": message, "code": CODE}` with a 4xx status.
"""

import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from ..errors import InvalidParam, RecallError
from ..kit import representable
from .admin_oauth import add_oauth_routes
from .storage_errors import HTTP_STATUS
from ..admin.tokens import hash_token
from ..memory.erase import EraseReceipt
from ..memory.transfer import ImportLine
from ..admin.service import (MAX_NAMESPACE_LEN, MAX_OFFSET, NAMESPACE_PATTERN, AdminService,
                             NotFound)
from ..contracts import AdminAction, CallResults, NamespaceSummary, RetrievalHit, TokenInfo
from ..admin.tokens import admin_name
from ..access.principal import MAX_AGENT_LEN

#: `access.principal.valid_agent_name`'s rule, for the OpenAPI document (ECMA and Python agree).
AGENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
from .webhook_routes import add_webhook_routes

OPENAPI_PATH = "/openapi.json"

STATUS = {"INVALID_PARAM": 400, "CONFIRM_REQUIRED": 400, "NOT_FOUND": 404,
          "SUBSCRIPTION_NOT_FOUND": 404,
          "UNAUTHORIZED": 401, "FORBIDDEN": 403, "UNSUPPORTED": 501, **HTTP_STATUS}


class ErrorBody(BaseModel):
    error: str = Field(description="What was wrong and what to do next.")
    code: str = Field(description="Stable code: UNAUTHORIZED, FORBIDDEN, INVALID_PARAM, "
                                  "CONFIRM_REQUIRED, NOT_FOUND.")


class NamespacePage(BaseModel):
    namespaces: list[NamespaceSummary]
    total: int
    next_offset: int | None


class TokenList(BaseModel):
    namespace: str
    tokens: list[TokenInfo]


Scope = Literal["memory:read", "memory:write", "memory:forget"]


class NewTokenRequest(BaseModel):
    """What the new token may do. An empty body (or no body) makes a token with every scope
    for the namespace's owner, as tokens were before scopes existed."""

    model_config = {"extra": "forbid"}

    agent: str | None = Field(
        None, min_length=1, max_length=MAX_AGENT_LEN, pattern=AGENT_PATTERN,
        description="Bind the token to this agent inside the namespace (letters, digits, '.', "
                    "'_', '-'); omit it for the namespace's owner.")
    scopes: list[Scope] | None = Field(
        None, min_length=1,
        description="memory:read (search, inspect, stats), memory:write (store, consolidate), "
                    "memory:forget (delete a memory, erase). Omit for all three.")


class NewToken(BaseModel):
    namespace: str
    token: str = Field(description="The raw bearer token. Shown once; only its hash is kept.")
    token_id: str
    agent: str | None = Field(description="The agent it is bound to; null: the owner.")
    scopes: list[Scope]


class Revoked(BaseModel):
    revoked: str


class EraseRequest(BaseModel):
    confirm: str = Field(description="The namespace's name, exactly: erasing cannot be undone.")


class Erased(BaseModel):
    memories_deleted: int
    tokens_revoked: int
    receipt: EraseReceipt


# At least one character that str.strip() keeps (ImportLine refuses blank text); spelled out
# so the OpenAPI (ECMA) regex and Python agree.
NONBLANK = r"[^\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


class ImportItem(ImportLine):
    text: str = Field(pattern=NONBLANK, description="The memory's text (not blank).")


class ImportRequest(BaseModel):
    mode: Literal["verbatim", "extract"] = Field(
        "verbatim", description="verbatim: each line is one memory; extract: each line is "
                                "queued for extraction like store_memory.")
    memories: list[ImportItem] = Field(max_length=100_000)


class Imported(BaseModel):
    lines: int
    imported: int | None = None
    queued: int | None = None
    already_queued: int | None = None


class Job(BaseModel):
    id: str
    namespace: str
    kind: str
    status: str
    attempts: int
    error: str | None
    created_at: datetime
    finished_at: datetime | None
    text: str | None
    topic: str | None


class JobPage(BaseModel):
    jobs: list[Job]
    total: int
    counts: dict[str, int]
    next_offset: int | None


class Retried(BaseModel):
    retried: str


class AuditPage(BaseModel):
    actions: list[AdminAction]
    total: int
    next_offset: int | None


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No admin token, or an unknown or revoked one."},
    403: {"model": ErrorBody, "description": "A namespace token: admin routes need an admin token."},
    400: {"model": ErrorBody, "description": "Invalid input (e.g. an unknown query parameter) "
                                             "or a missing confirmation."},
}
NOT_FOUND = {404: {"model": ErrorBody, "description": "No such token or job."}}

NamespacePath = Annotated[str, Path(min_length=1, max_length=MAX_NAMESPACE_LEN,
                                    pattern=NAMESPACE_PATTERN, description="The namespace's name.")]
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]

_bearer = HTTPBearer(auto_error=False)


def build_admin_api(admin: AdminService) -> FastAPI:
    """The admin API as a FastAPI app (the HTTP app mounts it at /admin)."""
    api = FastAPI(title="Recall admin API", version="1", openapi_url=OPENAPI_PATH,
                  docs_url=None, redoc_url=None,
                  description="Operators' API: namespaces, tokens, erasure, export/import, the "
                              "job queue and the audit log. Authorization: Bearer <admin token> "
                              "(`recall create-token --admin`).")
    add_error_handlers(api)
    Actor = Annotated[str, Depends(actor_dependency(api, admin))]
    add_namespace_routes(api, admin, Actor)
    add_queue_routes(api, admin, Actor)
    add_retrieval_routes(api, admin, Actor)
    add_oauth_routes(api, admin.storage, Actor, NamespacePath, ERRORS, NOT_FOUND)
    add_webhook_routes(api, admin, Actor, NamespacePath, {**ERRORS, **NOT_FOUND})
    return api


def add_error_handlers(api: FastAPI) -> None:
    """Errors as `{"error", "code"}` with a 4xx status: ours (RecallError) and FastAPI's own."""

    @api.exception_handler(RecallError)
    async def recall_error(request: Request, exc: RecallError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.code == "UNAUTHORIZED" else None
        return JSONResponse({"error": exc.message, "code": exc.code},
                            status_code=STATUS.get(exc.code, 400), headers=headers)

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # FastAPI's own errors (unparsable body, unknown path, wrong method) in our shape.
        code = {400: "INVALID_PARAM", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(
            exc.status_code, "HTTP_ERROR")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            # Starlette names only the first route that matched the path; list them all.
            headers["Allow"] = ", ".join(sorted({
                m for r in api.routes if isinstance(r, APIRoute)
                and r.matches(request.scope)[0] != Match.NONE for m in r.methods}))
        return JSONResponse({"error": str(exc.detail), "code": code},
                            status_code=exc.status_code, headers=headers)


def actor_dependency(api: FastAPI, admin: AdminService) -> Callable[..., Awaitable[str]]:
    """The dependency every route takes: the caller's admin name ("admin:NAME") from its bearer
    token, after refusing query parameters the operation does not declare."""

    async def known_query(request: Request) -> None:
        # A misspelt query parameter (?limt=5) is an error, not silently the default.
        route = request.scope.get("route")
        op = api.openapi()["paths"].get(getattr(route, "path_format", ""), {}).get(
            request.method.lower(), {})
        allowed = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
        unknown = sorted(set(request.query_params) - allowed)
        if unknown:
            raise RecallError(f"Unknown query parameter(s): {', '.join(map(repr, unknown))}. "
                              f"This operation takes: {', '.join(sorted(allowed)) or 'none'}.",
                              code="INVALID_PARAM")

    async def actor(request: Request,
                    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
        name = await authenticate(admin, creds)
        await known_query(request)
        await storable_body(request)
        return name

    return actor


async def storable_body(request: Request) -> None:
    """The one rule for what can be stored (kit.representable), before the body's schema is
    checked: a JSON body with a NUL or a lone surrogate in a string, a number Python reads as
    NaN or Infinity (`1e400`), an integer beyond int64 or deep nesting is INVALID_PARAM naming
    where. (FastAPI's own 422 would echo such a value back and fail to encode it: a 500.)"""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    try:
        doc = json.loads(await request.body())  # FastAPI read and kept it already
    except (ValueError, RecursionError):
        return  # not JSON: FastAPI's own error answers
    problem = representable.json_problem(doc, "body")
    if problem:
        raise InvalidParam(problem)


async def authenticate(admin: AdminService, creds: HTTPAuthorizationCredentials | None) -> str:
    """"admin:NAME" for an admin token; UNAUTHORIZED or FORBIDDEN (a namespace token) else."""
    if creds is None or not creds.credentials:
        raise RecallError("Send 'Authorization: Bearer <admin token>'. Create one with "
                          "`recall create-token --admin`.", code="UNAUTHORIZED")
    name = await admin_name(admin.storage, creds.credentials)
    if name is not None:
        return f"admin:{name}"
    if await admin.storage.namespace_for_token(hash_token(creds.credentials)) is not None:
        raise RecallError("This is a namespace token; admin routes need an admin token "
                          "(`recall create-token --admin`).", code="FORBIDDEN")
    raise RecallError("Unknown or revoked admin token. Create one with "
                      "`recall create-token --admin`.", code="UNAUTHORIZED")


def add_namespace_routes(api: FastAPI, admin: AdminService, Actor: Any) -> None:
    """Namespaces, their tokens, erasure, export and import."""

    @api.get("/namespaces", response_model=NamespacePage, responses=ERRORS,
             summary="List namespaces with counts and last activity")
    async def list_namespaces(who: Actor, limit: Limit = 50, offset: Offset = 0) -> Any:
        return await admin.namespaces(limit, offset)

    @api.get("/namespaces/{namespace}/tokens", response_model=TokenList, responses=ERRORS,
             summary="List a namespace's tokens (ids only, never the tokens)")
    async def list_tokens(who: Actor, namespace: NamespacePath) -> Any:
        return await admin.tokens(namespace)

    @api.post("/namespaces/{namespace}/tokens", response_model=NewToken, status_code=201,
              responses=ERRORS, summary="Create a token for a namespace (shown once)")
    async def create_token(who: Actor, namespace: NamespacePath,
                           body: NewTokenRequest | None = None) -> Any:
        body = body or NewTokenRequest()
        return await admin.create_token(who, namespace, body.agent, body.scopes)

    @api.delete("/namespaces/{namespace}/tokens/{token_id}", response_model=Revoked,
                responses={**ERRORS, **NOT_FOUND}, summary="Revoke a namespace's token")
    async def revoke_token(who: Actor, namespace: NamespacePath,
                           token_id: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$")]) -> Any:
        return await admin.revoke_token(who, namespace, token_id)

    @api.post("/namespaces/{namespace}/erase", response_model=Erased,
              responses=ERRORS,
              summary="Erase a namespace: memories, jobs, tasks; revokes its tokens")
    async def erase(who: Actor, namespace: NamespacePath, body: EraseRequest) -> Any:
        return await admin.erase_namespace(who, namespace, body.confirm)

    @api.get("/namespaces/{namespace}/export", responses={
        **ERRORS, 200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                        "description": "One JSON object per active memory."}},
        response_class=StreamingResponse, summary="Export a namespace's memories as JSON lines")
    async def export(who: Actor, namespace: NamespacePath) -> Any:
        lines = await admin.export(who, namespace)

        async def body() -> Any:
            async for line in lines:
                yield line + "\n"
        return StreamingResponse(body(), media_type="application/x-ndjson")

    @api.post("/namespaces/{namespace}/import", response_model=Imported,
              response_model_exclude_none=True, responses=ERRORS,
              summary="Import memories (the export's lines) into a namespace")
    async def import_(who: Actor, namespace: NamespacePath, body: ImportRequest) -> Any:
        return await admin.import_memories(who, namespace, body.memories,
                                           extract=body.mode == "extract")


def add_queue_routes(api: FastAPI, admin: AdminService, Actor: Any) -> None:
    """The job queue and the audit log."""

    @api.get("/jobs", response_model=JobPage, responses=ERRORS,
             summary="Jobs of the queue by status (all namespaces unless one is given)")
    async def jobs(who: Actor, namespace: Annotated[str | None, Query(max_length=MAX_NAMESPACE_LEN,
                                                         pattern=NAMESPACE_PATTERN)] = None,
                   status: Literal["queued", "running", "done", "failed"] = "failed",
                   limit: Limit = 50, offset: Offset = 0) -> Any:
        return await admin.jobs(namespace or None, status, limit, offset)

    @api.post("/jobs/{job_id}/retry", response_model=Retried, responses={**ERRORS, **NOT_FOUND},
              summary="Queue a failed job again (attempts start over)")
    async def retry(who: Actor, job_id: Annotated[str, Path(max_length=200)]) -> Any:
        return await admin.retry_job(who, job_id)

    @api.get("/audit", response_model=AuditPage, responses=ERRORS,
             summary="Audit log of admin actions, newest first")
    async def audit(who: Actor, limit: Limit = 50, offset: Offset = 0) -> Any:
        return await admin.audit(limit, offset)


class Retrievals(BaseModel):
    retrievals: list[RetrievalHit]


def add_retrieval_routes(api: FastAPI, admin: AdminService, Actor: Any) -> None:
    """The retrieval audit: which searches returned a memory, what one search returned."""
    Id = Annotated[str, Path(min_length=1, max_length=200)]

    @api.get("/namespaces/{namespace}/memories/{memory_id}/retrievals",
             response_model=Retrievals, responses=ERRORS,
             summary="The namespace's recent searches that returned a memory, newest first")
    async def retrievals(who: Actor, namespace: NamespacePath, memory_id: Id) -> Any:
        return {"retrievals": await admin.service.retrievals(namespace, memory_id)}

    @api.get("/namespaces/{namespace}/calls/{call_id}", response_model=CallResults,
             responses={**ERRORS, **NOT_FOUND},
             summary="One audited call and the memories it returned (ids and scores)")
    async def call(who: Actor, namespace: NamespacePath, call_id: Id) -> Any:
        found = await admin.storage.call_results(namespace, call_id)
        if found is None:
            raise NotFound(f"No audited call {call_id!r} in namespace {namespace!r}. Take the "
                           f"call_id from a memory's retrievals, or from the audit log line.")
        return found
