"""The house's rules, checked on the source (issue 26):

- plugins import from core only its public surface: `recall_core` itself and the declared
  public subpackages `recall_core.contracts`, `recall_core.kit` and `recall_core.testing`;
- the facade exports what it says;
- no module of recall_core is over ~400 lines, and no function over ~80 (a bigger one holds
  two ideas: split it by what it does);
- recall_core has no import cycle, type-only imports included.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import recall_core

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "recall_core"
PUBLIC = ("recall_core", "recall_core.contracts", "recall_core.kit", "recall_core.testing")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def plugin_sources() -> list[Path]:
    """The source packages of the bundled plugins and the example (their tests are
    integration tests of the whole server and may reach further)."""
    packages = [*ROOT.glob("plugins/*/recall_*"), *ROOT.glob("examples/*/recall_*")]
    return sorted(p for pkg in packages if pkg.is_dir() for p in pkg.rglob("*.py"))


def imported_modules(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
    return out


def public(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in PUBLIC[1:]) \
        or module == PUBLIC[0]


def test_plugins_import_only_the_public_surface():
    sources = plugin_sources()
    assert len(sources) > 20, "the plugin packages were not found"
    private = [f"{path.relative_to(ROOT)}:{line}: {module}" for path in sources
               for line, module in imported_modules(path)
               if module.startswith("recall_core") and not public(module)]
    assert not private, "plugins import core internals:\n" + "\n".join(private)


def test_the_facade_exports_what_it_declares():
    for name in recall_core.__all__:
        assert hasattr(recall_core, name), name
    for sub in PUBLIC[1:]:
        module = importlib.import_module(sub)
        for name in getattr(module, "__all__", ()):
            assert getattr(module, name) is not None, f"{sub}.{name}"


def core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_modules_and_functions_stay_small(path):
    source = path.read_text(encoding="utf-8")
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{lines} lines: split the module by what it does"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_imports(path: Path) -> set[str]:
    """The recall_core modules `path` imports, relative imports resolved, type-only ones
    included; `from pkg import name` counts as importing `pkg.name` when that is a module."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if (ROOT / Path(*sub.split("."))).with_suffix(".py").exists()
                        or (ROOT / Path(*sub.split(".")) / "__init__.py").exists() else target)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    # Importing a.b.c runs a.b's __init__ first: a package's facade is part of the path
    # (kit/__init__ importing search, which imports kit.text, was a cycle through it).
    parents = {".".join(m.split(".")[:i]) for m in out for i in range(2, m.count(".") + 1)}
    inside = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    return {m for m in out | parents
            if m.startswith("recall_core") and m != name and m not in inside}


def test_core_has_no_import_cycle():
    graph = {module_name(p): core_imports(p) for p in core_modules()}
    # A package's __init__ re-exporting its own modules is how a facade works; a cycle
    # through a facade is still a cycle, so facades count too, except the root package,
    # which every module imports `__version__` or the public names from.
    graph = {m: {d for d in deps if d in graph and d != "recall_core"}
             for m, deps in graph.items() if m != "recall_core"}
    seen: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if seen.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in seen:
                visit(d)
        stack.pop()
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
