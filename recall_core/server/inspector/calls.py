"""The inspector's page for one audited call: what a search returned to the agent (the
retrieval audit, `memory/retrieval_audit.py`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from .access import Context


async def call(request: Request, ctx: Context) -> Response:
    story = await ctx.runtime.service.call(ctx.caller, request.path_params["id"])
    if story is None:
        return ctx.render("error.html", 404, message="No such call in this namespace: it may "
                          "be older than the audit keeps, or the namespace was erased.")
    return ctx.render("call.html", **story)
