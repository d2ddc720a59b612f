"""The versioned prompt files every LLM extractor sends, and the output instructions that go
with each way of getting structured output.

The prompt files (`prompts/extract_v2.md`, `prompts/merge_v1.md`) speak of "the
record_memories tool". The fact inventory is not copied into them: a prompt's
`<!-- inventory -->` line is replaced by the list generated from core's inventory
(`recall_core.kit.attributes`), the one the fact model holds every extractor to, so a new
attribute reaches every model's prompt by being added there. Where the answer is a JSON document instead of a tool call, a short
appendix names the JSON shape; the instructions themselves stay the same file, so the prompt
version recorded with an extraction means the same thing for every extractor.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

from recall_core import ConfigError
from recall_core.kit.attributes import ENDED
from recall_core.kit.inventory_text import inventory_summary

INVENTORY_MARK = "<!-- inventory -->"


def load_prompt(override: Path | None, builtin: str, setting: str,
                plugin: str = "haiku") -> tuple[str, str]:
    """(prompt text, version). Built-in prompts are versioned by file name (`extract_v2`); an
    override is versioned by its name and content hash, so stored results can be traced to
    the exact prompt that produced them."""
    if override is None:
        text = resources.files("recall_extractors").joinpath(f"prompts/{builtin}.md").read_text(
            encoding="utf-8")
        return with_inventory(text), builtin
    path = Path(override).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"[plugins.{plugin}] {setting} = {str(override)!r} cannot be read "
            f"({exc.strerror or exc}). "
            f"Point it at an existing UTF-8 text file, or remove the key to use the built-in "
            f"prompt {builtin}.md.") from None
    if not text.strip():
        raise ConfigError(f"[plugins.{plugin}] {setting} = {str(override)!r} is empty. Write "
                          f"the prompt into it, or remove the key to use the built-in "
                          f"{builtin}.md.")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return with_inventory(text), f"custom:{path.name}@{digest}"


def inventory_text() -> str:
    """The inventory as a prompt section, generated from core's (recall_core.kit.attributes)."""
    return "\n".join([
        "## Attribute names",
        "",
        f"- A person, one value: {inventory_summary('person', False)}, `favorite_<thing>`.",
        f"- A person, several values: {inventory_summary('person', True)}.",
        f"- A team, project or system, one value: {inventory_summary('thing', False)}.",
        f"- An ended value of an attribute with several values: `<attribute>:<value>` with "
        f"value `{ENDED}`.",
    ])


def with_inventory(text: str) -> str:
    """The prompt with its inventory mark (if any) replaced by `inventory_text()`."""
    return text.replace(INVENTORY_MARK, inventory_text())


def json_appendix(tool: str, schema: dict[str, Any], *, with_schema: bool) -> str:
    """What to add to the system prompt when the answer is a JSON document, not a tool call.

    `with_schema` spells the shape out: needed where nothing else tells the model (prompt-only,
    or a server that ignores the schema attached to JSON mode). It is a compact outline, not
    the JSON schema itself: small models copy a schema's description strings into their
    answers ("value": "The current value as written; null when ..."), and the outline costs a
    third of the tokens. OpenAI's JSON mode also refuses a request whose messages never say
    "JSON", which this text always does.
    """
    text = (f"\n\n## Output format\n\nAnswer with one JSON object and nothing else: the input "
            f"of the `{tool}` tool described above (no prose, no code fence).")
    if with_schema:
        text += "\nIts shape:\n\n" + outline(schema)
    return text


def outline(schema: dict[str, Any]) -> str:
    """A JSON-like outline of a schema: keys, enums as a|b, types, nullable marked."""
    def walk(node: dict[str, Any]) -> str:
        if "anyOf" in node:
            kinds = [walk(n) for n in node["anyOf"] if n.get("type") != "null"]
            nullable = any(n.get("type") == "null" for n in node["anyOf"])
            return " | ".join(kinds) + (" or null" if nullable else "")
        if "enum" in node:
            return '"' + "|".join(map(str, node["enum"])) + '"'
        kind = node.get("type")
        if kind == "object":
            return "{" + ", ".join(f'"{k}": {walk(v)}' for k, v in
                                   node.get("properties", {}).items()) + "}"
        if kind == "array":
            return "[" + walk(node.get("items", {})) + ", ...]"
        if kind == "number":
            lo, hi = node.get("minimum"), node.get("maximum")
            return f"number {lo}..{hi}" if lo is not None and hi is not None else "number"
        return str(kind or "value")

    return walk(schema)
