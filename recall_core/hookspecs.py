"""The Recall plugin API. Every hook a plugin can implement is here, and its docstring is
its documentation.

A plugin is a module (or object) with functions decorated by ``recall_core.hookimpl``,
published under the entry-point group ``recall``::

    # pyproject.toml
    [project.entry-points.recall]
    myranker = "my_package.plugin"

Registry hooks (``register_*``) receive a ``register`` callback rather than returning values,
so core knows which plugin supplied what; a name registered twice stops start-up with an error
naming both plugins.

Factories receive the plugin's settings: the ``[plugins.<name>]`` table of ``recall.toml``
validated by the pydantic model given as ``settings=`` (or a plain dict when none is given),
with ``RECALL_PLUGIN_<NAME>_<KEY>`` environment variables overriding the file.
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("recall")
hookimpl = pluggy.HookimplMarker("recall")

# register(name, factory, *, settings=None, **extra)
Register = Callable[..., None]


@hookspec
def register_storage(register: Register) -> None:
    """Offer a storage backend for one or more database URL schemes.

    Call ``register(scheme, factory, settings=SettingsModel)`` once per scheme, e.g.
    ``register("sqlite", make_sqlite)``. ``factory(url: str, settings) -> Storage`` is called
    once at start-up with the configured database URL (``--db``, ``RECALL_DB_URL`` /
    ``RECALL_DB_PATH``, or ``db`` in the config file). The returned object implements
    ``recall_core.contracts.storage.Storage`` and should pass ``recall_core.testing.StorageContract``.
    A bare filesystem path is treated as ``sqlite:///<path>``.
    """


@hookspec
def register_rankers(register: Register) -> None:
    """Offer retrieval rankers.

    Call ``register(name, factory, settings=SettingsModel)``. Rankers listed in the config's
    ``rankers`` table (``[rankers] bm25 = 1.0``; the value is the ranker's weight in RRF
    fusion) are built with ``factory(settings) -> Ranker`` and each asked, per search, for
    ranked candidate ids. A ranker that exposes ``embedder`` also provides write-time
    embeddings, MMR similarity and consolidation clustering.
    """


@hookspec
def register_extractors(register: Register) -> None:
    """Offer extractors that turn stored text into typed memories.

    Call ``register(name, factory, settings=SettingsModel)``. The one named by the config's
    ``extractor`` key is built with ``factory(settings) -> Extractor``; a factory that cannot
    work (e.g. missing API key) raises ``recall_core.errors.ConfigError`` with the fix.
    """


@hookspec
def register_middleware(register: Register) -> None:
    """Offer FastMCP middleware that wraps every tool call.

    Call ``register(name, factory, order=N, settings=SettingsModel)``. The config's
    ``middleware`` list picks which run (default: every registered one); lower ``order``
    runs outermost. ``factory(settings, runtime) -> fastmcp.server.middleware.Middleware``;
    ``runtime`` gives access to ``storage``, ``service`` and ``config``.
    """


@hookspec
def register_tools(mcp: Any, service: Any) -> None:
    """Add MCP tools of a plugin's own.

    Decorate functions with ``@mcp.tool`` and call ``service`` (``MemoryService``) from them;
    the namespace of the caller comes from ``recall_core.server.auth.current_namespace()``. Every
    tool description is checked at start-up for prompt-injection patterns (URLs, "ignore
    previous", instructions to call other tools or to send data) and refused if it matches.
    Tools should return ``recall_core.server.mcp.envelope`` envelopes.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``recall`` CLI.

    ``cli`` is the ``argparse`` sub-parsers object: ``p = cli.add_parser("name", help=...)``
    then ``p.set_defaults(func=handler)``, where ``handler(args) -> int`` returns the exit
    code.
    """
