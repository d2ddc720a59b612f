"""A2A (Agent-to-Agent protocol) for Recall, on the official a2a-sdk.

`a2a_routes(runtime, handler, public_url)` gives the public agent card and the bearer-protected
JSON-RPC and REST bindings under /a2a, which the HTTP app (server/app.py) lists next to /mcp.
Modules: `card` (agent card), `auth` (bearer check -> namespace -> SDK call context),
`task_store` (tasks in Storage, namespace-scoped), `executor` (the AgentExecutor: the skills,
through the one `MemoryService`), `inputs` (input rules), `numbers` (whole numbers as JSON
integers on the wire), `routes` (the route list).
"""

from .numbers import WholeNumbers
from .routes import a2a_routes, build_handler

__all__ = ["WholeNumbers", "a2a_routes", "build_handler"]
