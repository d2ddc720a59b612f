"""The Recall plugin API. Every hook a plugin can implement is here, and its docstring is
its documentation.

A plugin is a module (or object) with functions decorated by ``recall_core.hookimpl``,
published under the entry-point group ``recall``::

    # pyproject.toml
    [project.entry-points.recall]
    myranker = "my_package.plugin"

Every hook receives one typed ``register`` object (``recall_core.registration``) and calls
it; core calls each hook once through ``pm.hook``, so ``wrapper=True`` implementations and
pluggy's hook-call monitoring work as pluggy documents. A name registered twice stops
start-up with an error naming both plugins, and an exception in a hook names its plugin.

Factories receive the plugin's settings: the ``[plugins.<name>]`` table of ``recall.toml``
validated by the pydantic model given as ``settings=`` (or a plain dict when none is given),
with ``RECALL_PLUGIN_<NAME>_<KEY>`` environment variables overriding the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .registration import (CommandRegistry, ExtractorRegistry, MiddlewareRegistry,
                               RankerRegistry, StorageRegistry, ToolRegistry)

hookspec = pluggy.HookspecMarker("recall")
hookimpl = pluggy.HookimplMarker("recall")


# -- what a server is built from ------------------------------------------------------------

@hookspec
def register_storage(register: StorageRegistry) -> None:
    """Offer a storage backend for one or more database URL schemes.

    :param register: call ``register(scheme, factory, settings=Model, config_name=None)``
        once per scheme, e.g. ``register("sqlite", make_sqlite)``. ``factory(url, settings)
        -> Storage`` is called once at start-up with the configured database URL (``--db``,
        ``RECALL_DB_URL`` / ``RECALL_DB_PATH``, or ``db`` in the config file; a bare
        filesystem path means ``sqlite:///<path>``). The storage implements
        ``recall_core.contracts.Storage``, declares its optional parts in ``capabilities``,
        and should pass ``recall_core.testing.StorageContract``.
    """


@hookspec
def register_rankers(register: RankerRegistry) -> None:
    """Offer retrieval rankers.

    :param register: call ``register(name, factory, settings=Model, default_weight=1.0)``.
        Rankers listed in the config's ``rankers`` table (``[rankers] bm25 = 1.0``; the value
        is the ranker's weight in RRF fusion), or every installed one at its
        ``default_weight`` when there is no table, are built with ``factory(settings)``,
        which returns a ``recall_core.Ranker`` subclass (its optional capabilities, such as
        an ``embedder``, are documented there), and asked per search for ranked candidate
        ids. It should pass ``recall_core.testing.RankerContract``.
    """


@hookspec
def register_extractors(register: ExtractorRegistry) -> None:
    """Offer extractors that turn stored text into typed memories.

    :param register: call ``register(name, factory, settings=Model, automatic=None,
        preference=0)``. The one the config's ``extractor`` key names is built with
        ``factory(settings)``, a ``recall_core.Extractor``; with ``extractor = "auto"`` the
        available one (``automatic()`` true) of highest ``preference`` runs. A factory that
        cannot work (e.g. a missing API key) raises ``recall_core.ConfigError`` with the fix.
    """


@hookspec
def register_middleware(register: MiddlewareRegistry) -> None:
    """Offer FastMCP middleware that wraps every MCP tool call.

    :param register: call ``register(name, factory, order=N, settings=Model)``. The config's
        ``middleware`` list picks which run (default: every registered one); lower ``order``
        runs outermost. ``factory(settings, runtime)`` returns a
        ``fastmcp.server.middleware.Middleware``; ``runtime``
        (``recall_core.server.runtime.Runtime``) has the ``config``, ``storage``,
        ``service`` and ``audit`` log.
    """


# -- what callers can use -------------------------------------------------------------------

@hookspec
def register_tools(register: ToolRegistry) -> None:
    """Add MCP tools of a plugin's own.

    :param register: decorate async functions with ``@register.tool`` (FastMCP's
        ``@mcp.tool`` options); call ``register.service`` (``MemoryService``) with the namespace
        from ``await register.caller_namespace()`` (it carries the caller: an agent's token
        reads only what the agent may, see ``register.caller()``); answer with ``recall_core.ok_envelope`` /
        ``error_envelope``. Every description (and parameter description) is checked at
        start-up for prompt-injection patterns (URLs, "ignore previous", instructions to call
        other tools or to send data) and the server refuses to start if one matches.
    """


@hookspec
def register_commands(register: CommandRegistry) -> None:
    """Add subcommands to the ``recall`` CLI.

    :param register: call ``register(name, handler, help=..., description=None,
        arguments=None, database=False)``: ``arguments(parser)`` adds the command's flags to
        its ``argparse`` parser, ``database=True`` adds ``--db`` and ``--config`` as core's
        commands have them, and ``handler(args)`` (a function or coroutine function) returns
        the exit code. A ``recall_core.ConfigError`` it raises is printed as one line with
        exit code 2.
    """
