"""What a plugin's `register_*` hook receives: one typed registry object per kind of plugin.

A plugin calls the object it is given, `register(name, factory, settings=Model, ...)`, with
the keyword arguments its kind declares (a ranker's `default_weight`, middleware's `order`).
Every hook is called once through `pm.hook`, so pluggy's wrappers and hook-call monitoring
see it; each registration is attributed to the plugin whose hook implementation made it
(found on the call stack), so a name registered twice stops start-up naming both plugins.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any

import pluggy

from .errors import PluginError


def plugin_label(pm: pluggy.PluginManager, plugin: object) -> str:
    """`dist-name` (and module for core built-ins) of a plugin, else its registration name."""
    name = pm.get_name(plugin) or repr(plugin)
    dist = getattr(pm, "dists", {}).get(name)
    if dist is None:
        return name
    return f"{dist[0]} ({name})" if dist[0] == "recall-core" else dist[0]


class HookCall:
    """One call of a hook through `pm.hook`, able to say which plugin's implementation is
    running (for registrations) or raised (for errors)."""

    def __init__(self, pm: pluggy.PluginManager, hook_name: str):
        self.pm = pm
        self.hook_name = hook_name
        impls = getattr(pm.hook, hook_name).get_hookimpls()
        self._plugins = {impl.function.__code__: impl.plugin for impl in impls}

    def _label_in(self, frames: list[FrameType]) -> str | None:
        for frame in frames:
            plugin = self._plugins.get(frame.f_code)
            if plugin is not None:
                return plugin_label(self.pm, plugin)
        return None

    def current_plugin(self) -> str:
        """The plugin whose hook implementation is on the stack now."""
        frames, frame = [], inspect.currentframe()
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        return self._label_in(frames) or "an unknown plugin"

    def raised_in(self, tb: TracebackType | None) -> str | None:
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        return self._label_in(frames[::-1])

    def __call__(self, **kwargs: Any) -> list[Any]:
        try:
            return getattr(self.pm.hook, self.hook_name)(**kwargs)
        except PluginError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
            label = self.raised_in(sys.exc_info()[2]) or "a plugin"
            raise PluginError(f'Plugin "{label}" failed in {self.hook_name}: '
                              f"{type(exc).__name__}: {exc}") from exc


@dataclass
class Entry:
    """One registration: what the plugin gave, and which plugin gave it."""

    name: str
    factory: Callable[..., Any]
    plugin: str
    settings: type | None = None
    options: dict[str, Any] = field(default_factory=dict)


class Registry:
    """The registrations of one kind; a duplicate name is a start-up error."""

    def __init__(self, kind: str):
        self.kind = kind
        self.entries: dict[str, Entry] = {}

    def add(self, entry: Entry) -> None:
        if not isinstance(entry.name, str) or not entry.name:
            raise PluginError(f"Plugin {entry.plugin!r} registered a {self.kind} with an empty name.")
        if entry.name in self.entries:
            other = self.entries[entry.name].plugin
            raise PluginError(
                f"{self.kind} {entry.name!r} is registered twice: by {other!r} and by "
                f"{entry.plugin!r}. Uninstall one of them or disable it with "
                f"RECALL_DISABLE_PLUGINS.")
        self.entries[entry.name] = entry

    def get(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            choices = ", ".join(sorted(self.entries)) or "none installed"
            raise PluginError(
                f"Unknown {self.kind} {name!r}. Installed {self.kind}s: {choices}. "
                f"Check the spelling in your config or install the plugin that provides it."
            ) from None

    def names(self) -> list[str]:
        return sorted(self.entries)


class _Registrar:
    """Base of the objects the `register_*` hooks receive."""

    hook = ""
    kind = ""

    def __init__(self, call: HookCall):
        self._call = call
        self.registry = Registry(self.kind)

    def _add(self, name: str, factory: Callable[..., Any], settings: type | None,
             **options: Any) -> None:
        if not callable(factory):
            raise PluginError(f"Plugin {self._call.current_plugin()!r} registered {self.kind} "
                              f"{name!r} with a factory that is not callable: {factory!r}.")
        self.registry.add(Entry(name, factory, self._call.current_plugin(), settings, options))

    @classmethod
    def collect(cls, pm: pluggy.PluginManager) -> Registry:
        """Call the hook of this kind on every plugin and return what they registered."""
        call = HookCall(pm, cls.hook)
        registrar = cls(call)
        call(register=registrar)
        return registrar.registry


class StorageRegistry(_Registrar):
    """`register(scheme, factory, *, settings=None, config_name=None)`, once per URL scheme.

    `factory(url, settings) -> Storage`; `config_name` names the `[plugins.<name>]` table
    when it is not the scheme (postgres registers two schemes with one table)."""

    hook, kind = "register_storage", "storage backend"

    def __call__(self, scheme: str, factory: Callable[..., Any], *, settings: type | None = None,
                 config_name: str | None = None) -> None:
        self._add(scheme, factory, settings, config_name=config_name or scheme)


class RankerRegistry(_Registrar):
    """`register(name, factory, *, settings=None, default_weight=1.0)`.

    `factory(settings) -> Ranker`; `default_weight` is its weight in the fusion when the
    config has no `[rankers]` table (0: installed but off until a config enables it)."""

    hook, kind = "register_rankers", "ranker"

    def __call__(self, name: str, factory: Callable[..., Any], *, settings: type | None = None,
                 default_weight: float = 1.0) -> None:
        self._add(name, factory, settings, default_weight=float(default_weight))


class ExtractorRegistry(_Registrar):
    """`register(name, factory, *, settings=None, automatic=None, preference=0)`.

    `factory(settings) -> Extractor`. With `extractor = "auto"` (the default config) the
    server runs, among the extractors whose `automatic()` answers True now (e.g. "an API key
    is set", or always for an offline one), the one with the highest `preference`; an
    extractor without `automatic` runs only when the config names it."""

    hook, kind = "register_extractors", "extractor"

    def __call__(self, name: str, factory: Callable[..., Any], *, settings: type | None = None,
                 automatic: Callable[[], bool] | None = None, preference: int = 0) -> None:
        self._add(name, factory, settings, automatic=automatic, preference=preference)


class MiddlewareRegistry(_Registrar):
    """`register(name, factory, *, settings=None, order=100)`.

    `factory(settings, runtime) -> fastmcp Middleware`; lower `order` runs outermost."""

    hook, kind = "register_middleware", "middleware"

    def __call__(self, name: str, factory: Callable[..., Any], *, settings: type | None = None,
                 order: int = 100) -> None:
        self._add(name, factory, settings, order=order)


@dataclass
class PluginTool:
    """A tool a plugin offers: its function and FastMCP's `@mcp.tool` options."""

    fn: Callable[..., Any]
    plugin: str
    options: dict[str, Any]


class ToolRegistry:
    """What `register_tools` receives.

    Decorate the plugin's async functions with `@register.tool` (or `@register.tool(name=...,
    annotations=..., output_schema=..., timeout=...)`: the options of FastMCP's `@mcp.tool`).
    A tool calls `register.service` (the `MemoryService` every transport uses) with the
    caller's namespace from `await register.caller_namespace()` (from the verified credential,
    never from an argument), and answers with `recall_core.ok_envelope` /
    `error_envelope`. Core adds the tools to the MCP server after checking their
    descriptions (`server.mcp.safety`)."""

    hook = "register_tools"

    def __init__(self, call: HookCall, service: Any):
        self._call = call
        self.service = service
        self.tools: list[PluginTool] = []

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        def add(f: Callable[..., Any]) -> Callable[..., Any]:
            self.tools.append(PluginTool(f, self._call.current_plugin(), options))
            return f
        return add(fn) if fn is not None else add

    async def caller(self) -> Any:
        """The verified caller (`recall_core.access.principal.Principal`: namespace, agent,
        scopes); raises UNAUTHORIZED without one."""
        from .server.auth import current_principal, verified_namespace

        await verified_namespace()
        return current_principal()

    async def caller_namespace(self) -> str:
        """The verified caller's namespace (raises UNAUTHORIZED without one). It carries the
        caller (`access.partitions.CallerNamespace`): `register.service` methods called with
        it read and write only what the caller may (an agent's credential never acts as the
        namespace's owner)."""
        from .access.partitions import CallerNamespace

        return CallerNamespace(await self.caller())

    async def answer(self, fn: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
        """`await fn(namespace, **kwargs)` for the verified caller (the namespace as
        `caller_namespace()` gives it), as the envelope core's
        tools answer with: the result as data; a `RecallError` as its code and message;
        anything else as INTERNAL, logged with its traceback, never reported as success."""
        from .server.mcp.tools import answer_with_envelope

        return await answer_with_envelope(fn, **kwargs)

    @classmethod
    def collect(cls, pm: pluggy.PluginManager, service: Any) -> list[PluginTool]:
        call = HookCall(pm, cls.hook)
        registrar = cls(call, service)
        call(register=registrar)
        return registrar.tools


@dataclass
class PluginCommand:
    """A `recall` subcommand a plugin offers."""

    name: str
    handler: Callable[..., Any]
    plugin: str
    help: str
    description: str | None = None
    arguments: Callable[[Any], None] | None = None
    database: bool = False


class CommandRegistry:
    """What `register_commands` receives: `register(name, handler, *, help, description=None,
    arguments=None, database=False)`.

    `arguments(parser)` adds the command's own flags to its `argparse` parser; with
    `database=True` the command also gets `--db` and `--config`, read as every core command
    reads them (pass `args` to `recall_core.load_config(args.config, db=args.db)`).
    `handler(args)` returns the exit code (it may be a coroutine function). Raise
    `recall_core.ConfigError` for a clear one-line error and exit code 2."""

    hook = "register_commands"

    def __init__(self, call: HookCall):
        self._call = call
        self.commands: list[PluginCommand] = []

    def __call__(self, name: str, handler: Callable[..., Any], *, help: str,
                 description: str | None = None, arguments: Callable[[Any], None] | None = None,
                 database: bool = False) -> None:
        if any(c.name == name for c in self.commands):
            other = next(c.plugin for c in self.commands if c.name == name)
            raise PluginError(f"command {name!r} is registered twice: by {other!r} and by "
                              f"{self._call.current_plugin()!r}.")
        self.commands.append(PluginCommand(name, handler, self._call.current_plugin(), help,
                                           description, arguments, database))

    @classmethod
    def collect(cls, pm: pluggy.PluginManager) -> list[PluginCommand]:
        call = HookCall(pm, cls.hook)
        registrar = cls(call)
        call(register=registrar)
        return registrar.commands


REGISTRARS: dict[str, type[_Registrar]] = {
    r.hook: r for r in (StorageRegistry, RankerRegistry, ExtractorRegistry, MiddlewareRegistry)}


def collect(pm: pluggy.PluginManager, hook: str) -> Registry:
    """What the plugins of `pm` register with a registry hook (`register_storage`,
    `register_rankers`, `register_extractors`, `register_middleware`)."""
    return REGISTRARS[hook].collect(pm)
