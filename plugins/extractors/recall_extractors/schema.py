"""The output shape every LLM extractor asks for, and how a reply becomes `ExtractedMemory`.

One pydantic schema for Haiku and for OpenAI-compatible servers: the JSON schema sent to the
model (as a tool's input, a `response_format`, or a prompt appendix) is generated from it, and
every reply is validated against it on our side, because a grammar that constrains generation
still ignores bounds (a 135M model returned `importance: 2` under llama.cpp's grammar).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from recall_core import ExtractedMemory
from recall_core.kit.attributes import is_many

from .keys import canonical_triple

log = logging.getLogger("recall.extractors")

EXTRACT_TOOL = "record_memories"
MERGE_TOOL = "record_merged_memory"
EXTRACT_DESCRIPTION = "Record the memories found in the text."
MERGE_DESCRIPTION = "Record the one memory that replaces the cluster."


class MemoryItem(BaseModel):
    """One memory as the model records it."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, description="The memory as one short standalone sentence, "
                      "in the original wording.")
    type: Literal["preference", "fact", "decision", "procedure"]
    importance: float = Field(ge=0.0, le=1.0, description="How much this matters later, 0..1.")
    entity: str | None = Field(None, description='"user" for the speaker, "team" for we/our, '
                               "else the lowercase name; null when there is no triple.")
    attribute: str | None = Field(None, description="Canonical snake_case attribute; null when "
                                  "there is no triple.")
    value: str | None = Field(None, description="The current value as written; null when "
                              "there is no triple.")

    @field_validator("type", mode="before")
    @classmethod
    def _lower_type(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("importance", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> Any:
        # 1.2 is a model's way of saying "very": clamp rather than fail the job over it.
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return min(1.0, max(0.0, float(v)))
        return v

    @field_validator("entity", "attribute", "value", mode="before")
    @classmethod
    def _str_or_none(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        # "" and "null" are how small models write "no triple".
        if isinstance(v, str) and v.strip().lower() in ("", "null", "none", "n/a"):
            return None
        return v


class RecordMemories(BaseModel):
    """Input of the record_memories tool (or the whole JSON reply in the JSON modes)."""

    model_config = ConfigDict(extra="ignore")

    memories: list[MemoryItem] = Field(description="Every memory in the text; empty for "
                                       "chit-chat.")


class ReplacingItem(MemoryItem):
    """A memory as the model records it when the prompt lists earlier statements
    (`<earlier>`): the field is asked for only then, since a small model given one more
    field it has no use for can run off its output budget (SmolLM2-135M did)."""

    replaces: list[int] = Field(default_factory=list, description="Numbers of <earlier> "
                                "statements whose value this one-valued fact replaces; [] "
                                "when none or unsure.")

    @field_validator("replaces", mode="before")
    @classmethod
    def _numbers(cls, v: Any) -> Any:
        # Small models write null, "2", or "[2]"; anything not a number is no number: a
        # replacement is never guessed from malformed output.
        if v is None:
            return []
        items = v if isinstance(v, list) else [v]
        out = []
        for item in items:
            text = str(item).strip(" []#")
            if text.isdigit():
                out.append(int(text))
        return out


class RecordReplacing(RecordMemories):
    """RecordMemories when the prompt lists earlier statements."""

    memories: list[ReplacingItem] = Field(description="Every memory in the text; empty for "
                                          "chit-chat.")


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with $refs inlined and titles dropped: self-contained and short,
    which is what tool input schemas should be."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: ({name: resolve(sub) for name, sub in v.items()} if k == "properties"
                        else resolve(v))
                    for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


# Keywords OpenAI's strict structured outputs reject or that no grammar enforces anyway; the
# bounds are checked (and clamped) by the pydantic models instead.
_STRICT_DROP = {"default", "minimum", "maximum", "minLength", "maxLength"}


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`tool_schema` made acceptable to `json_schema` response formats in strict mode: every
    object closed (`additionalProperties: false`) with every property required (nullable ones
    stay nullable through their `anyOf ... null`)."""

    def tighten(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: tighten(v) for k, v in node.items() if k not in _STRICT_DROP}
            if out.get("type") == "object" and "properties" in out:
                out["properties"] = {k: tighten(v) for k, v in node["properties"].items()}
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [tighten(v) for v in node]
        return node

    return tighten(tool_schema(model))


def problems(exc: ValidationError, limit: int = 5) -> str:
    """A validation error as one line a model (or an operator) can act on."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}"
                     for e in exc.errors()[:limit])


def to_extracted(item: MemoryItem, earlier: Sequence[str] = ()) -> ExtractedMemory | None:
    """One validated item as an `ExtractedMemory` with a canonical triple, or None when its
    text is blank. A partial triple is dropped: a key without a value would supersede
    nothing and could only mislead. `earlier`: the ids of the numbered <earlier> statements
    the model was shown; `replaces` keeps those it named, for a one-valued fact only (core
    checks again that each is current, keyless and said before)."""
    text = " ".join(item.text.split())
    if not text:
        return None
    triple = canonical_triple(item.entity, item.attribute, item.value)
    if triple is None and (item.entity or item.attribute or item.value):
        log.debug("dropping partial triple %r/%r/%r", item.entity, item.attribute, item.value)
    replaces: list[str] = []
    if isinstance(item, ReplacingItem) and triple is not None and not is_many(triple[1]):
        replaces = list(dict.fromkeys(earlier[n - 1] for n in item.replaces
                                      if 1 <= n <= len(earlier)))[:8]
    return ExtractedMemory(
        text=text, type=item.type, importance=item.importance,
        entity=triple[0] if triple else None, attribute=triple[1] if triple else None,
        value=triple[2] if triple else None, replaces=replaces)
