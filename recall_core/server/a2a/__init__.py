"""A2A (Agent-to-Agent protocol) for Recall, on the official a2a-sdk.

`mount_a2a(app, runtime, public_url=...)` adds the public agent card and the bearer-protected
JSON-RPC and REST bindings under /a2a to the HTTP app that serves /mcp. Modules: `card` (agent
card), `auth` (bearer check -> namespace -> SDK call context), `task_store` (tasks in
Storage, namespace-scoped), `executor` (the AgentExecutor: the skills, through the one
`MemoryService`), `routes` (wiring).
"""

from .routes import mount_a2a

__all__ = ["mount_a2a"]
