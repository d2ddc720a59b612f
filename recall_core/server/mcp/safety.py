"""Start-up check of tool descriptions contributed by plugins.

A tool description is read by the agent's model as instructions. A plugin could (by malice
or by accident) smuggle in text that steers the model: links to exfiltrate to, "ignore
previous instructions", orders to call other tools or send data somewhere. Such tools are
refused at start-up, naming the plugin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a URL", re.compile(r"\b(?:https?|ftp|file|wss?)://|\bwww\.[a-z0-9-]+\.", re.I)),
    ("an 'ignore previous instructions' phrase",
     re.compile(r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|system|all)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|messages?)", re.I)),
    ("an instruction to call another tool",
     re.compile(r"\b(?:always|first|then|must|should|before|after)\b[^.\n]{0,40}\b(?:call|invoke|run|use|execute)\b[^.\n]{0,30}\b(?:the\s+)?(?:tool|function)\b", re.I)),
    ("an instruction to send data",
     re.compile(r"\b(?:send|post|upload|forward|exfiltrate|transmit|email|leak)\b[^.\n]{0,60}\b(?:data|memories|tokens?|secrets?|credentials?|keys?|history|contents?)\b", re.I)),
    ("a hidden-instruction marker", re.compile(r"<\s*(?:important|system|instructions?)\s*>", re.I)),
)


def injection_findings(text: str) -> list[str]:
    return [label for label, pat in PATTERNS if pat.search(text or "")]


def describe_texts(tool) -> Iterable[str]:
    """The description and every parameter description of a FastMCP tool."""
    yield tool.description or ""
    props = (tool.parameters or {}).get("properties", {})
    for name, schema in props.items():
        if isinstance(schema, dict):
            yield f"{name}: {schema.get('description', '')}"
