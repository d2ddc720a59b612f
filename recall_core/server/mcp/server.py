"""The MCP server: FastMCP with the credential verifier, the middleware plugins registered,
Recall's seven tools and the tools plugins add."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastmcp import FastMCP
from fastmcp.tools import FunctionTool
from mcp_types import ToolAnnotations

from ... import __version__
from ...config import plugin_settings
from ...errors import PluginError
from ...registration import PluginTool, ToolRegistry
from ..auth import StorageTokenVerifier
from .safety import describe_texts, injection_findings
from .tools import ArgumentErrors, register_core_tools

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger("recall")

INSTRUCTIONS = (
    "Recall is your long-term memory. Call search_memories before answering questions that "
    "may depend on what the user told you earlier; call store_memory when the user states a "
    "preference, fact, decision or procedure worth keeping."
)


def plugin_middleware(runtime: Runtime) -> list[Any]:
    """The middleware the config enables (default: every registered one), outermost first."""
    reg = runtime.registries.middleware
    names = runtime.config.middleware
    entries = list(reg.entries.values()) if names is None else [reg.get(n) for n in names]
    entries.sort(key=lambda e: e.options["order"])
    out = []
    for e in entries:
        settings = plugin_settings(runtime.config, e.name, e.settings)
        try:
            out.append(e.factory(settings, runtime))
        except Exception as exc:  # noqa: BLE001
            raise PluginError(f'Plugin "{e.plugin}" failed to build middleware {e.name!r}: '
                              f"{type(exc).__name__}: {exc}") from exc
    return out


def add_plugin_tool(mcp: FastMCP, tool: PluginTool, taken: set[str]) -> None:
    """Add one plugin tool, refused when its name is taken or its descriptions read as
    instructions to the agent's model (`safety.py`)."""
    options = dict(tool.options)
    if isinstance(options.get("annotations"), dict):
        options["annotations"] = ToolAnnotations(**options["annotations"])
    try:
        built = FunctionTool.from_function(tool.fn, **options)
    except Exception as exc:  # noqa: BLE001 - named with the plugin
        raise PluginError(f'Plugin "{tool.plugin}" offers a tool FastMCP refuses: '
                          f"{type(exc).__name__}: {exc}") from exc
    if built.name in taken:
        raise PluginError(f'Plugin "{tool.plugin}" adds a tool named {built.name!r}, which '
                          f"another tool already has. Rename it (@register.tool(name=...)).")
    for text in describe_texts(built):
        found = injection_findings(text)
        if found:
            raise PluginError(
                f'Plugin "{tool.plugin}" adds tool {built.name!r} whose description contains '
                f"{', '.join(found)}: {text[:120]!r}. Tool descriptions are read by the "
                f"agent's model as instructions, so this is refused. Fix the plugin or "
                f"disable it with RECALL_DISABLE_PLUGINS.")
    mcp.add_tool(built)
    taken.add(built.name)


async def build_mcp(runtime: Runtime, *, auth: bool = True) -> FastMCP:
    mcp = FastMCP("recall", version=__version__, instructions=INSTRUCTIONS,
                  auth=StorageTokenVerifier(runtime.storage) if auth else None)
    if runtime.tracing is not None:
        from ...observability.tracing import tool_middleware

        mcp.add_middleware(tool_middleware(runtime.tracing.tracer,
                                           runtime.config.tracing.capture_content))  # outermost
    for mw in plugin_middleware(runtime):
        mcp.add_middleware(mw)
    mcp.add_middleware(ArgumentErrors())
    register_core_tools(mcp, runtime.service)
    taken = {t.name for t in await mcp.list_tools(run_middleware=False)}
    for tool in ToolRegistry.collect(runtime.pm, runtime.service):
        add_plugin_tool(mcp, tool, taken)
    await _schema_lookup_by_name(mcp)
    return mcp


async def _schema_lookup_by_name(mcp: FastMCP) -> None:
    """Give the MCP SDK each tool's input schema by name.

    For `Mcp-Param-*` header validation the SDK otherwise runs the whole `tools/list` handler
    (through every middleware) before each `tools/call` with arguments (python-sdk issue
    #3565); FastMCP 4.1 does not set the by-name lookup the SDK offers for this. Measured
    here: ~8% of a search call's server time. Our tools are fixed once the server is built,
    so the schemas are read once. The low-level server is private to FastMCP, hence the
    guard: without it the SDK keeps its slow path, which is still correct.
    """
    lowlevel = getattr(mcp, "_mcp_server", None)
    if lowlevel is None or not hasattr(lowlevel, "get_tool_input_schema"):
        log.warning("FastMCP's low-level server has no get_tool_input_schema; every tools/call "
                    "will list the tools first (slower, still correct)")
        return
    schemas = {t.name: t.parameters for t in await mcp.list_tools(run_middleware=False)}
    lowlevel.get_tool_input_schema = schemas.get
