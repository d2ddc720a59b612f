"""The openai extractor against a REAL model server: llama-cpp-python's OpenAI-compatible
server on loopback with SmolLM2-135M-Instruct (one thread), started by the fixture below.

These tests check the contract, not the quality: a 135M model labels most things
"preference" and copies the prompt's examples (bench/RESULTS.md reports its quality). What
must hold whatever the model says: a store ends as typed memories, constrained output parses,
failures are clear and retryable, the budget is honoured, long texts fit the context.

Skipped, with the reason, only where llama-cpp-python[server] or the model wheel is not
installed; CI installs both (.ci/run).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from llama_server import LlamaServer, unavailable
from recall_core.models import MEMORY_TYPES, Memory
from recall_core.protocols import ExtractionError
from recall_extractors import make_openai
from recall_extractors.openai_extractor import OpenAIExtractor
from recall_extractors.settings import OpenAISettings

_reason = unavailable()
pytestmark = pytest.mark.skipif(_reason is not None, reason=f"no local model server: {_reason}")

TEXTS = [
    "I prefer tabs over spaces.",
    "My name is Priya and I work at Northwind Traders as a data engineer.",
    "We decided to use Postgres for storage. To deploy, run make release and tag the commit.",
    "thanks, that's perfect",
]


@pytest.fixture(scope="module")
def llama():
    server = LlamaServer().start()
    yield server
    server.stop()


_open: list[OpenAIExtractor] = []


@pytest.fixture(autouse=True)
async def close_clients():
    """Close the SDK clients built by the test (an unclosed one errors at collection)."""
    yield
    while _open:
        await _open.pop().aclose()


def build(llama: LlamaServer, **overrides: Any) -> OpenAIExtractor:
    ex = make_openai(OpenAISettings(**llama.settings(**overrides)))
    _open.append(ex)
    return ex


@pytest.mark.parametrize("mode", ["json_object", "tool"])
async def test_constrained_output_parses_on_a_fixed_set_of_texts(llama, mode):
    ex = build(llama, structured_output=mode, repair=False)
    for text in TEXTS:
        out = await ex.extract(text)  # repair=False: one unparseable reply would raise here
        for m in out:
            assert m.type in MEMORY_TYPES and 0.0 <= m.importance <= 1.0 and m.text.strip()
            assert (m.entity is None) == (m.attribute is None) == (m.value is None)
    assert ex.usage.calls == len(TEXTS) and "repair" not in ex.usage.by_reason
    assert ex.usage.input_tokens > 0 and ex.usage.output_tokens > 0  # the server's counts


async def test_json_schema_mode_is_refused_by_llama_cpp_with_a_hint(llama):
    ex = build(llama, structured_output="json_schema")
    with pytest.raises(ExtractionError) as err:
        await ex.extract(TEXTS[0])
    assert err.value.retryable and "HTTP 500" in str(err.value)
    assert 'try structured_output = "json_object"' in str(err.value)


async def test_merge_returns_one_valid_memory(llama):
    at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    cluster = [Memory(namespace="n", text="I use vim.", created_at=at - timedelta(days=5)),
               Memory(namespace="n", text="I switched to VS Code.", created_at=at)]
    merged = await build(llama).merge(cluster, "tools")
    assert merged.text.strip() and merged.type in MEMORY_TYPES
    assert 0.0 <= merged.importance <= 1.0


async def test_a_long_text_is_split_to_fit_the_servers_context(llama):
    # ~7 KB: about 1,700 real tokens, which with the prompt and a 3,000-token output budget
    # would not fit the server's 4,096-token context in one call.
    text = "\n\n".join(f"Note {i}: the staging host number {i} runs the billing service on "
                       f"port {8000 + i} and is patched every Tuesday." for i in range(60))
    ex = build(llama, max_tokens=600, chunk_tokens=None)
    out = await ex.extract(text)
    assert ex.usage.pieces >= 5 and ex.usage.calls >= ex.usage.pieces
    assert all(m.type in MEMORY_TYPES for m in out)


async def test_a_timeout_shorter_than_the_reply_is_a_retryable_error(llama):
    ex = build(llama, timeout=0.05, max_retries=1)
    with pytest.raises(ExtractionError) as err:
        await ex.extract(TEXTS[1])
    assert err.value.retryable and "did not answer within 0.05s after 1 retry" in str(err.value)
    await asyncio.sleep(0)  # the server finishes the abandoned requests on its own


async def test_the_call_budget_is_honoured_against_the_server(llama):
    ex = build(llama, calls_per_minute=1, budget_wait=0)
    await ex.extract(TEXTS[0])
    with pytest.raises(ExtractionError) as err:
        await ex.extract(TEXTS[2])
    assert err.value.retryable and "calls_per_minute = 1" in str(err.value)
    assert ex.usage.calls == 1


async def test_a_store_over_mcp_ends_as_typed_memories(llama, tmp_path):
    from serverproc import Agent, ServerProcess

    s = llama.settings()
    env = {"RECALL_EXTRACTOR": "openai", "RECALL_WORKER__RETRY_BACKOFF": "0"}
    env.update({f"RECALL_PLUGIN_OPENAI_{k.upper()}": str(v) for k, v in s.items()})
    srv = ServerProcess(str(tmp_path / "recall.db"), tmp_path, env=env).start()
    try:
        async with Agent(srv.url, srv.token("ivy")) as ivy:
            ack = await ivy.ok("store_memory", text=TEXTS[1], topic="intro")
            assert ack["queued"] is True
            stats = await ivy.wait_idle(timeout=240)
            assert stats["failed_extractions"] == 0, stats
            assert stats["total"] >= 1
            page = await ivy.ok("inspect_memories", limit=50)
            for m in page["memories"]:
                assert m["type"] in MEMORY_TYPES and m["text"].strip()
                assert m["topic"] == "intro"
        assert "extractor=openai" in srv.log()
    finally:
        srv.stop()
