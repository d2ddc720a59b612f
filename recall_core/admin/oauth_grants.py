"""OAuth grants made by Recall's own authorization server ([oauth] mode = "builtin"), for the
people who manage them: list a namespace's grants and revoke one, from the inspector, the admin
API and the CLI. Every change is a row in the admin audit log (`admin_actions`), as token
creation is; the authorization server writes its own rows (consent, token issue, refresh,
revoke) through `audit` too. (No MCP imports here: the CLI stays fast.)"""

from __future__ import annotations

import logging
from typing import Any

from ..contracts import AdminAction, OAuthGrant
from .service import NotFound, Unsupported, valid_namespace_name

log = logging.getLogger("recall.oauth")

#: Actions written to the audit log by the built-in authorization server.
ACTIONS = ("oauth_consent", "oauth_deny", "oauth_token", "oauth_code_reuse", "oauth_refresh",
           "oauth_refresh_reuse", "oauth_revoke")


def grant_view(g: OAuthGrant) -> dict[str, Any]:
    """A grant as JSON (admin API, CLI, inspector). Never holds a token or code."""
    return {"grant_id": g.grant_id, "namespace": g.namespace, "agent": g.agent,
            "scopes": g.scopes.split(), "client_id": g.client_id, "client_name": g.client_name,
            "redirect_uri": g.redirect_uri, "resource": g.resource,
            "created_at": g.created_at.isoformat() if g.created_at else None,
            "refreshed_at": g.refreshed_at.isoformat() if g.refreshed_at else None,
            "revoked_at": g.revoked_at.isoformat() if g.revoked_at else None}


def grant_detail(g: OAuthGrant) -> dict[str, Any]:
    """What an audit row says about a grant (its namespace has its own column)."""
    return {"grant_id": g.grant_id, "client_id": g.client_id, "client_name": g.client_name,
            "agent": g.agent, "scopes": g.scopes}


async def audit(storage: Any, actor: str, action: str, namespace: str | None,
                detail: dict[str, Any], error: str | None = None) -> None:
    """One admin audit row, on a storage that keeps the log. A failure to write it is logged,
    never raised: the OAuth answer (a token, a redirect) has already been decided."""
    if not storage.capabilities.admin:
        return
    try:
        await storage.record_admin_action(AdminAction(
            actor=actor, action=action, namespace=namespace, detail=detail,
            result="error" if error else "ok", error=error))
    except Exception:  # noqa: BLE001
        log.exception("could not write the audit row for %s", action)


class OAuthGrants:
    """List and revoke a namespace's OAuth grants (the storage's oauth capability)."""

    def __init__(self, storage: Any):
        self.storage = storage

    def _need_oauth(self) -> None:
        if not self.storage.capabilities.oauth:
            raise Unsupported(f"The storage backend ({self.storage.description}) does not offer "
                              f"the oauth capability (recall_core.contracts.oauth.OAuthStorage), "
                              f"so it holds no OAuth grants.")

    async def list(self, namespace: Any) -> dict[str, Any]:
        self._need_oauth()
        namespace = valid_namespace_name(namespace)
        grants = await self.storage.list_oauth_grants(namespace)
        return {"namespace": namespace, "grants": [grant_view(g) for g in grants]}

    async def revoke(self, actor: str, namespace: Any, grant_id: Any) -> dict[str, Any]:
        """Revoke one grant of `namespace` (None: of any namespace; the CLI run where the
        database is). Every token of it answers 401 on its next request."""
        self._need_oauth()
        if namespace is not None:
            namespace = valid_namespace_name(namespace)
        gid = str(grant_id or "").strip()
        revoked = await self.storage.revoke_oauth_grant(gid, namespace) if gid else None
        if revoked is None:
            error = (f"No active OAuth grant {gid!r}"
                     f"{f' in namespace {namespace!r}' if namespace else ''}: it does not "
                     f"exist or is already revoked. List grants with `recall oauth-grants "
                     f"NAMESPACE` (or GET /admin/namespaces/NAMESPACE/oauth-grants).")
            await audit(self.storage, actor, "oauth_revoke", namespace, {"grant_id": gid},
                        error=error)
            raise NotFound(error)
        await audit(self.storage, actor, "oauth_revoke", revoked.namespace,
                    grant_detail(revoked))
        return {"revoked": True, "grant": grant_view(revoked)}
