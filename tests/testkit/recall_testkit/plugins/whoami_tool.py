"""Test plugin: a `whoami` tool answering the verified caller's principal (namespace, agent,
scopes) as the server sees it, so OAuth tests can check the claim mapping end to end.

Loaded into a real server process with RECALL_PLUGIN_MODULES=recall_testkit.plugins.whoami_tool."""

from recall_core import hookimpl


@hookimpl
def register_tools(register):
    @register.tool
    async def whoami() -> dict:
        """The caller's namespace, agent and scopes (tests only)."""
        from recall_core.server.auth import current_principal

        p = current_principal()
        return {"status": "ok", "data": {"namespace": p.namespace, "agent": p.agent,
                                         "scopes": sorted(p.scopes)},
                "error": None, "code": None}
