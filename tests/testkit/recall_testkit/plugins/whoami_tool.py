"""Test plugin: a `whoami` tool answering the verified caller's principal (namespace, agent,
scopes) as the server sees it, so OAuth tests can check the claim mapping end to end.

Loaded into a real server process with RECALL_PLUGIN_MODULES=recall_testkit.plugins.whoami_tool."""

from recall_core import hookimpl


@hookimpl
def register_tools(register):
    # Read-only: a plugin tool's scope comes from its annotations (memory:read here), so any
    # credential with a Recall scope may ask who it is.
    @register.tool(annotations={"readOnlyHint": True, "destructiveHint": False})
    async def whoami() -> dict:
        """The caller's namespace, agent and scopes (tests only)."""
        from recall_core.server.auth import current_principal

        p = current_principal()
        return {"status": "ok", "data": {"namespace": p.namespace, "agent": p.agent,
                                         "scopes": sorted(p.scopes)},
                "error": None, "code": None}
