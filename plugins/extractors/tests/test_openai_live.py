"""The openai extractor against a REAL model server: llama-cpp-python's OpenAI-compatible
server on loopback with SmolLM2-135M-Instruct (one thread), started by the fixture below.

These tests check the contract, not the quality: a 135M model labels most things
"preference" and copies the prompt's examples (bench/RESULTS.md reports its quality). What
must hold whatever the model says: a store ends as typed memories, constrained output parses,
failures are clear and retryable, the budget is honoured, long texts fit the context.

The tests run in file order, tool mode first: the server reuses the KV cache of the previous
request's prompt prefix, so calls with one system prompt in a row skip re-reading ~1,000
tokens (tens of seconds on one CPU thread). The end-to-end test through `recall serve` is here
too, to share the one server.

Skipped, with the reason, only where llama-cpp-python[server] or the model wheel is not
installed; CI installs both (.ci/run).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from recall_testkit.llama_server import LlamaServer, unavailable
from recall_core.models import MEMORY_TYPES, Memory
from recall_core.contracts import ExtractionError
from recall_extractors import make_openai
from recall_extractors.openai_extractor import OpenAIExtractor
from recall_extractors.settings import OpenAISettings

from recall_testkit.serverproc import Agent, ServerProcess

_reason = unavailable()
pytestmark = [pytest.mark.skipif(_reason is not None, reason=f"no local model server: {_reason}"),
              pytest.mark.slow]

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


def check(out) -> None:
    for m in out:
        assert m.type in MEMORY_TYPES and 0.0 <= m.importance <= 1.0 and m.text.strip()
        assert (m.entity is None) == (m.attribute is None) == (m.value is None)


async def test_a_forced_tool_call_parses_on_a_fixed_set_of_texts(llama):
    ex = build(llama, structured_output="tool", repair=False)
    for text in TEXTS:
        check(await ex.extract(text))  # repair=False: one unparseable reply would raise here
    assert ex.usage.calls == len(TEXTS) and "repair" not in ex.usage.by_reason
    assert ex.usage.input_tokens > 0 and ex.usage.output_tokens > 0  # the server's counts


async def test_a_long_text_is_split_to_fit_the_servers_context(llama):
    # ~2.4 KB, about 600 real tokens: with the ~1,400-token prompt (the fact inventory
    # included) and a 2,400-token output budget that is more than the server's 4,096-token
    # context, which would refuse one call. Split by the context window, every piece fits.
    text = "\n\n".join(f"Note {i}: host {i} runs the billing service on port {8000 + i}."
                       for i in range(40))
    ex = build(llama, max_tokens=2400)
    assert ex.chunk_tokens < 600
    check(await ex.extract(text))
    assert ex.usage.pieces >= 2 and "split_after_cutoff" not in ex.usage.by_reason


async def test_the_call_budget_is_honoured_against_the_server(llama):
    ex = build(llama, calls_per_minute=1, budget_wait=0)
    await ex.extract(TEXTS[0])
    with pytest.raises(ExtractionError) as err:
        await ex.extract(TEXTS[2])
    assert err.value.retryable and "calls_per_minute = 1" in str(err.value)
    assert ex.usage.calls == 1


async def test_a_store_over_mcp_ends_as_typed_memories(llama, tmp_path):
    """A user's view: `recall serve` configured through the environment only."""
    env = {"RECALL_EXTRACTOR": "openai", "RECALL_WORKER__RETRY_BACKOFF": "0"}
    env.update({f"RECALL_PLUGIN_OPENAI_{k.upper()}": str(v) for k, v in llama.settings().items()})
    srv = ServerProcess(str(tmp_path / "recall.db"), tmp_path, env=env).start()
    try:
        async with Agent(srv.url, srv.token("ivy")) as ivy:
            ack = await ivy.ok("store_memory", text=TEXTS[1], topic="intro")
            assert ack["queued"] is True
            stats = await ivy.wait_idle(timeout=240)
            assert stats["failed_extractions"] == 0, stats
            page = await ivy.ok("inspect_memories", limit=50)
            assert page["memories"] and stats["total"] == len(page["memories"])
            for m in page["memories"]:
                assert m["type"] in MEMORY_TYPES and m["text"].strip()
                assert m["topic"] == "intro"
        assert "extractor=openai" in srv.log_path.read_text()
    finally:
        srv.stop()


async def test_a_timeout_shorter_than_the_reply_is_a_retryable_error(llama):
    ex = build(llama, timeout=0.05, max_retries=1)
    with pytest.raises(ExtractionError) as err:
        await ex.extract(TEXTS[1])
    # Which limit speaks first depends on the machine's load: each attempt's timeout ("did
    # not answer within 0.05s after 1 retry") or the call's deadline ("did not finish
    # within 1s (2 attempt(s) of 0.05s)"). Either way: retryable, naming the timeout.
    message = str(err.value)
    assert err.value.retryable and "0.05s" in message
    assert ("did not answer within" in message or "did not finish within" in message), message


async def test_json_object_with_a_schema_parses_too(llama):
    ex = build(llama, structured_output="json_object", repair=False)
    for text in TEXTS[:2]:
        check(await ex.extract(text))
    assert ex.usage.calls == 2


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
