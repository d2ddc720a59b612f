"""The openai extractor through the real `openai` SDK against a scripted HTTP server on
loopback: request shapes per structured-output mode, validation and the one repair, garbage,
failing, slow and absent servers, splitting long texts, concurrency and the budget.

The same extractor against a real model server is in test_openai_live.py.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import openai._base_client as sdk_base
import pytest

from recall_core.kit.attributes import ENDED, INVENTORY
from recall_core.config import RecallConfig, plugin_settings
from recall_core.errors import ConfigError
from recall_core.contracts import ExtractionError, Extractor
from recall_extractors import NO_KEY, make_openai
from recall_extractors.openai_extractor import OpenAIExtractor, parse_reply
from recall_extractors.schema import EXTRACT_TOOL, MERGE_TOOL, RecordMemories
from recall_extractors.settings import OpenAISettings
from recall_testkit.scripted_server import ScriptedServer, completion, error

GOOD = {"memories": [
    {"text": "The user works at Acme Corp.", "type": "fact", "importance": 0.8,
     "entity": "User", "attribute": "Employer", "value": "Acme Corp"},
    {"text": "The user prefers dark mode.", "type": "Preference", "importance": 2,
     "entity": "user", "attribute": "theme", "value": "dark mode"},
    {"text": "To deploy, run make release.", "type": "procedure", "importance": 0.7,
     "entity": None, "attribute": None, "value": None},
]}


_open: list[OpenAIExtractor] = []


@pytest.fixture(autouse=True)
async def close_clients():
    """Close the SDK clients built by the test (an unclosed one errors at collection)."""
    yield
    while _open:
        await _open.pop().aclose()


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    # The SDK sleeps 0.5 s doubling between retries; the logic is the same at 1 ms.
    monkeypatch.setattr(sdk_base, "INITIAL_RETRY_DELAY", 0.001)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def build(server: ScriptedServer | str, **settings: Any) -> OpenAIExtractor:
    url = server if isinstance(server, str) else server.url
    settings.setdefault("max_retries", 0)
    ex = make_openai(OpenAISettings(base_url=url, model="test-model", **settings))
    _open.append(ex)
    return ex


def says(data: Any) -> dict:
    return completion(json.dumps(data))


# -- settings and factory ---------------------------------------------------------------------

def test_settings_are_typed_closed_and_consistent():
    cfg = RecallConfig(plugins={"openai": {"base_url": "http://127.0.0.1:8080/v1",
                                           "model": "smollm2", "structured_output": "tool",
                                           "context_window": "4096"}})
    s = plugin_settings(cfg, "openai", OpenAISettings)
    assert (s.model, s.structured_output, s.context_window) == ("smollm2", "tool", 4096)
    with pytest.raises(ConfigError, match="unknown key 'api_key'"):
        plugin_settings(RecallConfig(plugins={"openai": {"api_key": "sk"}}), "openai",
                        OpenAISettings)
    with pytest.raises(ConfigError, match="structured_output"):
        plugin_settings(RecallConfig(plugins={"openai": {"structured_output": "grammar"}}),
                        "openai", OpenAISettings)
    with pytest.raises(ConfigError, match="must be below context_window"):
        plugin_settings(RecallConfig(plugins={"openai": {"context_window": 1024,
                                                         "max_tokens": 2048}}),
                        "openai", OpenAISettings)


def test_openai_itself_without_a_key_is_a_config_error_with_the_fixes():
    with pytest.raises(ConfigError) as err:
        make_openai(OpenAISettings())
    msg = str(err.value)
    assert "OPENAI_API_KEY" in msg and "base_url" in msg and 'extractor = "stub"' in msg


def test_a_context_window_too_small_for_the_prompt_is_a_config_error():
    with pytest.raises(ConfigError, match="context_window = 1024 leaves no room"):
        make_openai(OpenAISettings(base_url="http://127.0.0.1:9/v1", context_window=1024,
                                   max_tokens=512))


async def test_local_server_needs_no_key_and_a_named_env_var_supplies_one(monkeypatch):
    with ScriptedServer(says({"memories": []})) as srv:
        ex = build(srv)
        assert isinstance(ex, Extractor) and ex.name == "openai"
        assert ex._client.api_key == NO_KEY
        await ex.extract("hello there, I use vim")
        monkeypatch.setenv("MY_LLM_KEY", "sk-local-123")
        keyed = build(srv, api_key_env="MY_LLM_KEY")
        assert keyed._client.api_key == "sk-local-123"


# -- request shape per structured-output mode ---------------------------------------------------

async def test_json_schema_mode_sends_a_strict_schema():
    with ScriptedServer(says(GOOD)) as srv:
        out = await build(srv, structured_output="json_schema").extract("I work at Acme.", "job")
    body = srv.requests[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    item = schema["properties"]["memories"]["items"]
    assert item["additionalProperties"] is False
    assert set(item["required"]) == {"text", "type", "importance", "entity", "attribute", "value"}
    assert "maximum" not in json.dumps(schema) and "default" not in json.dumps(schema)
    assert body["model"] == "test-model" and body["temperature"] == 0.0
    system, user = body["messages"]
    assert system["role"] == "system" and "record_memories" in system["content"]
    assert "JSON" in system["content"]  # OpenAI's JSON modes require the word
    assert "<topic>job</topic>" in user["content"] and "I work at Acme." in user["content"]
    assert len(out) == 3


async def test_json_object_mode_attaches_the_schema_to_the_format_and_the_prompt():
    with ScriptedServer(says(GOOD)) as srv:
        await build(srv, structured_output="json_object").extract("I work at Acme.")
    body = srv.requests[0]
    assert body["response_format"]["type"] == "json_object"
    schema = body["response_format"]["schema"]
    assert schema["properties"]["memories"]["type"] == "array"
    assert '"memories"' in body["messages"][0]["content"]


async def test_tool_mode_forces_the_named_function():
    with ScriptedServer(completion(tool=(EXTRACT_TOOL, json.dumps(GOOD)))) as srv:
        out = await build(srv, structured_output="tool").extract("I work at Acme.")
    body = srv.requests[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": EXTRACT_TOOL}}
    (tool,) = body["tools"]
    assert tool["function"]["name"] == EXTRACT_TOOL
    assert "response_format" not in body
    assert [m.type for m in out] == ["fact", "preference", "procedure"]


async def test_prompt_mode_only_describes_the_shape():
    with ScriptedServer(completion("Sure! ```json\n" + json.dumps(GOOD) + "\n```")) as srv:
        out = await build(srv, structured_output="prompt").extract("I work at Acme.")
    body = srv.requests[0]
    assert "response_format" not in body and "tools" not in body
    assert '"importance"' in body["messages"][0]["content"]
    assert len(out) == 3


# -- validation -------------------------------------------------------------------------------

async def test_replies_are_validated_clamped_and_canonicalised():
    with ScriptedServer(says(GOOD)) as srv:
        out = await build(srv).extract("I work at Acme Corp. I like dark mode.")
    assert (out[0].entity, out[0].attribute, out[0].value) == ("user", "employer", "Acme Corp")
    assert out[1].type == "preference" and out[1].importance == 1.0  # 2 clamped
    assert out[2].entity is None


async def test_the_system_prompt_carries_the_inventory_and_replies_are_held_to_it():
    reply = {"memories": [
        {"text": "I relocated to Porto.", "type": "fact", "importance": 0.8,
         "entity": "I", "attribute": "City", "value": "Porto"},
        {"text": "I speak French and German.", "type": "fact", "importance": 0.5,
         "entity": "user", "attribute": "languages", "value": "French"},
        {"text": "We use Jira for tickets.", "type": "fact", "importance": 0.5,
         "entity": "our team", "attribute": "tickets", "value": "Jira"},
    ]}
    with ScriptedServer(says(reply)) as srv:
        out = await build(srv, structured_output="json_object").extract("...")
    system = srv.requests[0]["messages"][0]["content"]
    assert all(f"`{name}`" in system for name in INVENTORY) and f"`{ENDED}`" in system
    assert [(m.entity, m.attribute, m.value) for m in out] == [
        ("user", "location", "Porto"), ("user", "languages_spoken:french", "French"),
        ("team", "issue_tracker", "Jira")]


@pytest.mark.parametrize("raw", [
    "<think>The user mentions a job.</think>" + json.dumps(GOOD),
    "```json\n" + json.dumps(GOOD) + "\n```",
    "Here you go: " + json.dumps(GOOD) + " Hope this helps!",
    json.dumps(GOOD["memories"]),                # a bare list
])
def test_parse_reply_is_lenient_where_the_meaning_is_plain(raw):
    assert len(parse_reply(raw, RecordMemories).memories) == 3


async def test_an_invalid_reply_gets_one_repair_with_what_was_wrong():
    bad = {"memories": [{"text": "I use vim", "type": "opinion", "importance": 0.5}]}
    with ScriptedServer(says(bad), says(GOOD)) as srv:
        ex = build(srv)
        out = await ex.extract("I use vim.")
    assert len(out) == 3 and len(srv.requests) == 2
    repair = srv.requests[1]["messages"]
    assert repair[2] == {"role": "assistant", "content": json.dumps(bad)}
    assert "memories.0.type" in repair[3]["content"] and repair[3]["role"] == "user"
    assert srv.requests[1]["response_format"] == srv.requests[0]["response_format"]
    assert ex.usage.by_reason == {"repair": 1, "repaired": 1} and ex.usage.calls == 2


async def test_garbage_twice_is_a_retryable_error_that_keeps_the_reply():
    garbage = "I am sorry, as a language model I cannot " + "blah " * 200
    with ScriptedServer(completion(garbage)) as srv:
        with pytest.raises(ExtractionError) as err:
            await build(srv).extract("I use vim.")
    msg = str(err.value)
    assert err.value.retryable and len(srv.requests) == 2
    assert "Malformed model output from test-model after one repair attempt" in msg
    assert "the reply is not JSON" in msg and "Nothing was stored" in msg
    assert "I am sorry, as a language model" in msg and "chars)" in msg
    assert len(msg) < 1000  # the reply is truncated on the job's error


async def test_without_repair_one_bad_reply_fails_the_attempt():
    with ScriptedServer(says({"items": []})) as srv:
        with pytest.raises(ExtractionError, match="memories: Field required"):
            await build(srv, repair=False).extract("I use vim.")
    assert len(srv.requests) == 1


async def test_no_choices_and_non_json_bodies_are_retryable_errors():
    no_choices = completion("x")
    no_choices["json"]["choices"] = []
    for answer in (no_choices, {"status": 200, "raw": b"<html>502 Bad Gateway</html>"}):
        with ScriptedServer(answer) as srv:
            with pytest.raises(ExtractionError) as err:
                await build(srv).extract("I use vim.")
        assert err.value.retryable, err.value


# -- long texts -------------------------------------------------------------------------------

def numbered(n: int) -> str:
    return "\n\n".join(f"Fact number {i}: the service listens on port {8000 + i}." * 3
                       for i in range(n))


def echo_first_line(body: dict) -> dict:
    text = body["messages"][-1]["content"]
    first = next(line for line in text.splitlines() if line.startswith("Fact number"))
    return says({"memories": [{"text": first[:60], "type": "fact", "importance": 0.5}]})


async def test_a_long_text_is_split_into_pieces_that_fit_each_call():
    text = numbered(40)  # ~6 KB
    with ScriptedServer(echo_first_line) as srv:
        ex = build(srv, chunk_tokens=300)
        out = await ex.extract(text)
    assert len(srv.requests) >= 6
    for body in srv.requests:
        piece = body["messages"][1]["content"]
        assert len(piece.encode()) <= 300 * 3 + 40
    # Every piece was extracted, in order.
    numbers = [int(m.text.split()[2].rstrip(":")) for m in out]
    assert numbers == sorted(numbers) and numbers[0] == 0 and len(out) == len(srv.requests)


async def test_a_reply_cut_off_at_max_tokens_splits_the_piece_again():
    def answer(body: dict) -> dict:
        text = body["messages"][1]["content"]
        if len(text) > 400:
            return completion('{"memories": [{"text": "Fact', finish="length")
        return echo_first_line(body)

    with ScriptedServer(answer) as srv:
        ex = build(srv, chunk_tokens=1000)
        out = await ex.extract(numbered(8))
    assert len(out) >= 4 and ex.usage.by_reason["split_after_cutoff"] >= 1


async def test_a_piece_too_small_to_split_that_is_still_cut_off_fails_for_good():
    with ScriptedServer(completion('{"memories": [', finish="length")) as srv:
        with pytest.raises(ExtractionError) as err:
            await build(srv).extract("I use vim.")
    assert not err.value.retryable and "raise [plugins.openai] max_tokens" in str(err.value)


async def test_context_overflow_from_the_server_splits_the_piece():
    def answer(body: dict) -> dict:
        if len(body["messages"][1]["content"]) > 500:
            return error(400, "Requested tokens (5210) exceed context window of 4096")
        return echo_first_line(body)

    with ScriptedServer(answer) as srv:
        out = await build(srv, chunk_tokens=2000).extract(numbered(10))
    assert len(out) >= 3


async def test_a_retry_after_a_failed_piece_only_pays_for_that_piece():
    failed_once: set[str] = set()

    def answer(body: dict) -> dict:
        text = body["messages"][1]["content"]
        if "Fact number 5:" in text and "5" not in failed_once:
            failed_once.add("5")
            return error(503, "model is loading")
        return echo_first_line(body)

    text = numbered(12)
    with ScriptedServer(answer) as srv:
        ex = build(srv, chunk_tokens=150)
        with pytest.raises(ExtractionError) as err:
            await ex.extract(text)
        assert err.value.retryable and "pieces of a long text failed" in str(err.value)
        first = len(srv.requests)
        out = await ex.extract(text)  # the worker's retry of the same job
    assert len(srv.requests) == first + 1 and ex.usage.memo_hits == first - 1
    assert len(out) == first


async def test_concurrency_bounds_simultaneous_calls():
    def slow(body: dict) -> dict:
        return {**echo_first_line(body), "delay": 0.2}

    with ScriptedServer(slow) as srv:
        await build(srv, chunk_tokens=100, concurrency=2).extract(numbered(16))
    assert len(srv.requests) >= 6 and srv.max_active == 2


# -- failing, slow and absent servers ---------------------------------------------------------

async def test_5xx_is_retried_by_the_sdk_then_retryable_with_a_mode_hint():
    with ScriptedServer(error(500, "Internal Server Error")) as srv:
        with pytest.raises(ExtractionError) as err:
            await build(srv, max_retries=2, structured_output="json_schema").extract("x y")
    assert err.value.retryable and len(srv.requests) == 3
    assert "HTTP 500" in str(err.value) and 'try structured_output = "json_object"' in str(err.value)


async def test_429_then_success():
    with ScriptedServer(error(429, "slow down", **{"retry-after": "0"}), says(GOOD)) as srv:
        assert len(await build(srv, max_retries=1).extract("I use vim.")) == 3


@pytest.mark.parametrize("answer, expect, calls", [
    (error(401, "Incorrect API key provided", "invalid_api_key"), "rejected the API key", 1),
    (error(404, "model 'qwen9' not found", "model_not_found"), "answered 404", 1),
    # The SDK retries every 429 before we can read its code.
    (error(429, "You exceeded your current quota", "insufficient_quota"), "no quota left", 3),
    (error(400, "'response_format' of type 'json_schema' is not supported"),
     "does not support structured_output", 1),
])
async def test_permanent_failures_stop_the_job_with_the_fix(answer, expect, calls):
    with ScriptedServer(answer) as srv:
        with pytest.raises(ExtractionError) as err:
            await build(srv, max_retries=2).extract("I use vim.")
    assert err.value.retryable is False and expect in str(err.value)
    assert len(srv.requests) == calls and srv.url in str(err.value)


async def test_a_server_that_is_down_is_a_retryable_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connection refused
        with pytest.raises(ExtractionError) as err:
            await build(f"http://127.0.0.1:{port}/v1", max_retries=1).extract("I use vim.")
    assert err.value.retryable and "Could not reach" in str(err.value)
    assert "the server is running" in str(err.value)


async def test_a_slow_server_times_out_as_a_retryable_error():
    with ScriptedServer({**says(GOOD), "delay": 3}) as srv:
        started = time.monotonic()
        with pytest.raises(ExtractionError) as err:
            await build(srv, timeout=0.3, max_retries=1).extract("I use vim.")
    assert err.value.retryable and "did not answer within 0.3s after 1 retry" in str(err.value)
    assert time.monotonic() - started < 2.5 and len(srv.requests) == 2


# -- budget -----------------------------------------------------------------------------------

async def test_calls_per_minute_is_honoured():
    with ScriptedServer(says({"memories": []})) as srv:
        ex = build(srv, calls_per_minute=2, budget_wait=0)
        await ex.extract("one")
        await ex.extract("two")
        with pytest.raises(ExtractionError) as err:
            await ex.extract("three")
    assert err.value.retryable and "calls_per_minute = 2" in str(err.value)
    assert len(srv.requests) == 2


async def test_tokens_per_minute_counts_what_the_server_reports():
    # Each reply reports 900 + 120 tokens, and a call first reserves its estimate (the prompt
    # with the fact inventory, ~1,700 tokens, + max_tokens): a 3500-token budget holds two
    # calls settled at the server's count, not three.
    with ScriptedServer(says({"memories": []})) as srv:
        ex = build(srv, tokens_per_minute=3500, budget_wait=0, max_tokens=256)
        await ex.extract("one")
        await ex.extract("two")
        with pytest.raises(ExtractionError, match="tokens_per_minute = 3500"):
            await ex.extract("three")
    assert ex.budget.used() == (2, 2040) and ex.usage.input_tokens == 1800


async def test_a_call_bigger_than_the_whole_token_budget_fails_for_good():
    with ScriptedServer(says({"memories": []})) as srv:
        ex = build(srv, tokens_per_minute=1000, max_tokens=2048, chunk_tokens=2000)
        with pytest.raises(ExtractionError) as err:
            await ex.extract("word " * 1500)
    assert err.value.retryable is False and "more than the whole budget" in str(err.value)
    assert srv.requests == []


async def test_a_call_waits_for_room_in_the_budget_within_budget_wait(monkeypatch):
    with ScriptedServer(says({"memories": []})) as srv:
        ex = build(srv, calls_per_minute=1, budget_wait=120)
        now = [1000.0]
        slept: list[float] = []

        async def fake_sleep(seconds: float) -> None:
            slept.append(seconds)
            now[0] += seconds

        ex.budget._clock = lambda: now[0]
        ex.budget._sleep = fake_sleep
        await ex.extract("one")
        now[0] += 15
        await ex.extract("two")
    assert slept == [45.0] and len(srv.requests) == 2


# -- merge ------------------------------------------------------------------------------------

async def test_merge_goes_through_the_merge_prompt_and_schema():
    from datetime import datetime, timedelta, timezone

    from recall_core.models import Memory

    at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    cluster = [Memory(namespace="n", text="I switched to VS Code.", created_at=at,
                      entity="user", attribute="editor", value="VS Code"),
               Memory(namespace="n", text="I use vim.", created_at=at - timedelta(days=9),
                      entity="user", attribute="editor", value="vim")]
    merged = {"text": "The user uses VS Code (previously vim).", "type": "fact",
              "importance": 0.7, "entity": "user", "attribute": "editor", "value": "VS Code"}
    with ScriptedServer(completion(tool=(MERGE_TOOL, json.dumps(merged)))) as srv:
        ex = build(srv, structured_output="tool")
        out = await ex.merge(cluster, "tools")
    assert (out.entity, out.attribute, out.value) == ("user", "editor", "VS Code")
    body = srv.requests[0]
    assert body["tool_choice"]["function"]["name"] == MERGE_TOOL
    assert body["messages"][0]["content"].startswith(ex.merge_prompt)
    sent = body["messages"][1]["content"]
    assert sent.index("I use vim.") < sent.index("I switched to VS Code.")


async def test_blank_text_makes_no_call():
    with ScriptedServer(says(GOOD)) as srv:
        assert await build(srv).extract("  \n") == []
    assert srv.requests == []
