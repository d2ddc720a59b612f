"""The haiku extractor against the real anthropic SDK with its HTTP transport replaced.

This SDK version speaks HTTP through `httpx2` (not `httpx`), so respx cannot see its requests:
an `httpx2.MockTransport` serves Messages API responses in the recorded shape instead. Nothing
here touches the network.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import anthropic
import anthropic._base_client as sdk_base
import httpx2
import pytest

from recall_core.kit.attributes import ENDED, INVENTORY
from recall_core.config import RecallConfig, plugin_settings
from recall_core.errors import ConfigError
from recall_core.models import Memory
from recall_core.contracts import ExtractionError, Extractor
from recall_extractors import make_haiku
from recall_extractors.haiku import EXTRACT_TOOL, MERGE_TOOL, HaikuExtractor
from recall_extractors.settings import DEFAULT_MODEL, HaikuSettings

KEY = "sk-ant-test-0000"


def message(tool_input: Any = None, *, name: str = EXTRACT_TOOL, content: list | None = None,
            stop_reason: str = "tool_use", model: str = DEFAULT_MODEL) -> dict[str, Any]:
    """A Messages API response body as the API returns it."""
    if content is None:
        content = [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": name,
                    "input": tool_input}]
    return {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
            "model": model, "content": content, "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 812, "output_tokens": 96, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}


def api_error(status: int, kind: str, text: str, **headers: str) -> httpx2.Response:
    return httpx2.Response(status, headers={"request-id": "req_011CTest", **headers},
                           json={"type": "error", "error": {"type": kind, "message": text}})


class FakeAPI:
    """Serves queued responses (or raises queued exceptions) and records every request."""

    def __init__(self, *answers: httpx2.Response | dict | Exception | Callable):
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if callable(answer) and not isinstance(answer, type):
            answer = await answer(request)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, dict):
            return httpx2.Response(200, json=answer)
        return answer

    def body(self, i: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[i].content)


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    # The SDK sleeps 0.5 s doubling between retries; the logic is the same at 1 ms.
    monkeypatch.setattr(sdk_base, "INITIAL_RETRY_DELAY", 0.001)


def build(api: FakeAPI, **settings: Any) -> HaikuExtractor:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    return HaikuExtractor(HaikuSettings(**settings), api_key=KEY, http_client=client)


GOOD = {"memories": [
    {"text": "The user works at Acme Corp.", "type": "fact", "importance": 0.8,
     "entity": "User", "attribute": "Employer", "value": "Acme Corp"},
    {"text": "The user prefers dark mode.", "type": "preference", "importance": 0.6,
     "entity": "user", "attribute": "theme", "value": "dark mode"},
    {"text": "To deploy, run make release, then tag the commit.", "type": "procedure",
     "importance": 0.7, "entity": None, "attribute": None, "value": None},
    {"text": "We decided to use Postgres for storage.", "type": "decision", "importance": 0.75,
     "entity": "we", "attribute": "storage", "value": "Postgres"},
]}


# -- success ----------------------------------------------------------------------------------

async def test_success_parses_memories_types_and_triples():
    api = FakeAPI(message(GOOD))
    ex = build(api)
    out = await ex.extract("I work at Acme Corp. I like dark mode. To deploy ...", "work")
    assert isinstance(ex, Extractor)
    assert [m.type for m in out] == ["fact", "preference", "procedure", "decision"]
    # Triples are canonicalised exactly like the stub's: inventory names, user/team entities
    # (a purpose the tool's category names is that category: storage + Postgres = database).
    assert (out[0].entity, out[0].attribute, out[0].value) == ("user", "employer", "Acme Corp")
    assert (out[1].entity, out[1].attribute, out[1].value) == ("user", "theme", "dark mode")
    assert out[2].entity is None and out[2].attribute is None and out[2].value is None
    assert (out[3].entity, out[3].attribute, out[3].value) == ("team", "database", "Postgres")
    assert out[0].importance == 0.8
    assert len(api.requests) == 1
    await ex.aclose()


async def test_request_carries_model_tool_prompt_and_text():
    api = FakeAPI(message({"memories": []}))
    ex = build(api, model="claude-haiku-4-5-20251001", max_tokens=1000)
    assert await ex.extract("lol ok", topic="chat") == []
    req = api.requests[0]
    body = api.body()
    assert req.url.path == "/v1/messages"
    assert KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    assert body["model"] == "claude-haiku-4-5-20251001"
    assert body["max_tokens"] == 1000
    assert body["tool_choice"]["type"] == "tool" and body["tool_choice"]["name"] == EXTRACT_TOOL
    (tool,) = body["tools"]
    assert tool["name"] == EXTRACT_TOOL
    item = tool["input_schema"]["properties"]["memories"]["items"]
    assert item["properties"]["type"]["enum"] == ["preference", "fact", "decision", "procedure"]
    assert "$ref" not in json.dumps(tool["input_schema"])
    assert body["system"] == ex.prompt and "record_memories" in ex.prompt
    assert ex.prompt_version == "extract_v2"
    sent = body["messages"][0]["content"]
    assert "lol ok" in sent and "<topic>chat</topic>" in sent


async def test_the_prompt_carries_the_fact_inventory():
    # Generated from core's inventory, not copied: every attribute name, whether it holds one
    # value or several, and how an ended value is written.
    api = FakeAPI(message({"memories": []}))
    ex = build(api)
    await ex.extract("I moved to Porto.")
    system = api.body()["system"]
    for attribute in INVENTORY.values():
        assert f"`{attribute.name}`" in system
    assert "A person, several values: `likes`" in system and f"`{ENDED}`" in system
    assert "<!-- inventory -->" not in system


async def test_a_models_free_form_attribute_is_normalised_onto_the_inventory():
    api = FakeAPI(message({"memories": [
        {"text": "I just started at Globex.", "type": "fact", "importance": 0.8,
         "entity": "The User", "attribute": "Company", "value": "Globex"},
        {"text": "My wife works at Initech.", "type": "fact", "importance": 0.6,
         "entity": "my wife", "attribute": "workplace", "value": "Initech"},
        {"text": "I'm allergic to peanuts.", "type": "fact", "importance": 0.7,
         "entity": "user", "attribute": "Allergy", "value": "Peanuts"},
        {"text": "I stopped using Docker.", "type": "fact", "importance": 0.5,
         "entity": "user", "attribute": "uses:Docker", "value": "no"},
        {"text": "My favourite editor is vim.", "type": "preference", "importance": 0.6,
         "entity": "user", "attribute": "favourite editor", "value": "vim"},
        {"text": "I no longer eat meat.", "type": "fact", "importance": 0.5,
         "entity": "user", "attribute": "likes", "value": "no longer"},
    ]}))
    out = await build(api).extract("...")
    assert [(m.entity, m.attribute, m.value) for m in out] == [
        ("user", "employer", "Globex"),
        ("wife", "employer", "Initech"),
        ("user", "allergies:peanut", "Peanuts"),   # many-valued: one key per value
        ("user", "uses:docker", ENDED),            # an ending in any spelling
        ("user", "editor", "vim"),
        (None, None, None),                        # an ending that names no value: no fact
    ]


async def test_blank_text_makes_no_call():
    api = FakeAPI(message({"memories": []}))
    assert await build(api).extract("   \n ") == []
    assert api.requests == []


async def test_lenient_on_harmless_deviations():
    odd = {"memories": [
        {"text": "User is 34.", "type": "Fact", "importance": 1.3, "entity": "I",
         "attribute": "age", "value": 34, "confidence": "high"},
        {"text": "Partial triple.", "type": "fact", "importance": 0.4, "entity": "user",
         "attribute": "editor", "value": None},
    ]}
    out = await build(FakeAPI(message(odd))).extract("I am 34.")
    assert out[0].type == "fact" and out[0].importance == 1.0
    assert (out[0].entity, out[0].attribute, out[0].value) == ("user", "age", "34")
    assert out[1].entity is None and out[1].attribute is None  # a partial triple is dropped


# -- malformed output -------------------------------------------------------------------------

async def test_text_only_answer_is_a_retryable_error():
    text_only = message(content=[{"type": "text", "text": "Here are the memories: ..."}],
                        stop_reason="end_turn")
    with pytest.raises(ExtractionError) as err:
        await build(FakeAPI(text_only)).extract("I use vim.")
    assert err.value.retryable
    assert "expected a record_memories tool call" in str(err.value) and "text" in str(err.value)


@pytest.mark.parametrize("bad, where", [
    ({"memories": [{"text": "x", "type": "opinion", "importance": 0.5}]}, "memories.0.type"),
    ({"memories": [{"type": "fact", "importance": 0.5}]}, "memories.0.text"),
    ({"memories": "I use vim"}, "memories"),
    ({"items": []}, "memories"),
])
async def test_schema_invalid_input_is_a_retryable_error(bad, where):
    with pytest.raises(ExtractionError) as err:
        await build(FakeAPI(message(bad))).extract("I use vim.")
    assert err.value.retryable
    assert "does not match its schema" in str(err.value) and where in str(err.value)


async def test_truncated_output_says_to_raise_max_tokens():
    cut = message({"memories": [{"text": "I use"}]}, stop_reason="max_tokens")
    with pytest.raises(ExtractionError, match=r"cut off at max_tokens \(4096\)"):
        await build(FakeAPI(cut)).extract("I use vim.")


# -- retries and transient failures -----------------------------------------------------------

async def test_429_then_success_is_retried_by_the_sdk():
    api = FakeAPI(api_error(429, "rate_limit_error", "Number of request tokens has exceeded "
                            "your per-minute rate limit", **{"retry-after": "0"}),
                  message(GOOD))
    out = await build(api, max_retries=2).extract("I work at Acme Corp.")
    assert len(out) == 4 and len(api.requests) == 2
    assert api.requests[1].headers["x-stainless-retry-count"] == "1"


async def test_429_until_retries_run_out_is_retryable():
    api = FakeAPI(api_error(429, "rate_limit_error", "rate limited"))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=2).extract("I use vim.")
    assert err.value.retryable and "Rate limited" in str(err.value)
    assert "after 2 retries" in str(err.value)
    assert len(api.requests) == 3


async def test_529_overloaded_is_retried_then_retryable():
    api = FakeAPI(api_error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=1).extract("I use vim.")
    assert err.value.retryable and "overloaded" in str(err.value)
    assert len(api.requests) == 2


async def test_529_then_success():
    api = FakeAPI(api_error(529, "overloaded_error", "Overloaded"), message(GOOD))
    assert len(await build(api, max_retries=1).extract("x")) == 4


async def test_500_is_retryable():
    api = FakeAPI(api_error(500, "api_error", "Internal server error"))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=0).extract("I use vim.")
    assert err.value.retryable and "HTTP 500" in str(err.value)


async def test_transport_timeout_is_retryable():
    api = FakeAPI(httpx2.ReadTimeout("timed out"))
    with pytest.raises(ExtractionError) as err:
        await build(api, timeout=2.5, max_retries=1).extract("I use vim.")
    assert err.value.retryable
    assert "did not answer within 2.5s" in str(err.value)
    assert len(api.requests) == 2  # the SDK retried once
    assert api.requests[0].extensions["timeout"]["read"] == 2.5


async def test_hanging_server_hits_the_overall_deadline():
    async def hang(request):
        await asyncio.sleep(10)

    ex = build(FakeAPI(hang), timeout=0.1, max_retries=0)
    with pytest.raises(ExtractionError) as err:
        await ex.extract("I use vim.")
    assert err.value.retryable and "did not finish" in str(err.value)


async def test_connection_error_is_retryable():
    api = FakeAPI(httpx2.ConnectError("Name or service not known"))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=0).extract("I use vim.")
    assert err.value.retryable and "Could not reach the Anthropic API" in str(err.value)


# -- permanent failures -----------------------------------------------------------------------

async def test_401_is_permanent_and_names_the_key():
    api = FakeAPI(api_error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=3).extract("I use vim.")
    assert err.value.retryable is False
    msg = str(err.value)
    assert "ANTHROPIC_API_KEY" in msg and "invalid x-api-key" in msg and "401" in msg
    assert "req_011CTest" in msg
    assert len(api.requests) == 1  # never retried


@pytest.mark.parametrize("status, kind, text, expect", [
    (403, "permission_error", "Your API key does not have permission", "not allowed to use model"),
    (404, "not_found_error", "model: claude-haiku-9", "was not found"),
    (400, "invalid_request_error", "Your credit balance is too low", "credit balance"),
])
async def test_client_errors_are_permanent(status, kind, text, expect):
    api = FakeAPI(api_error(status, kind, text))
    with pytest.raises(ExtractionError) as err:
        await build(api, max_retries=3).extract("I use vim.")
    assert err.value.retryable is False and expect in str(err.value)
    assert len(api.requests) == 1


# -- merge ------------------------------------------------------------------------------------

def mem(text: str, days_ago: int, **kw: Any) -> Memory:
    at = datetime(2026, 11, 1, tzinfo=timezone.utc) - timedelta(days=days_ago)
    return Memory(namespace="ns", text=text, created_at=at, **kw)


async def test_merge_sends_the_cluster_through_the_merge_tool():
    merged = {"text": "The user uses VS Code (previously vim).", "type": "fact",
              "importance": 0.7, "entity": "user", "attribute": "editor", "value": "VS Code"}
    api = FakeAPI(message(merged, name=MERGE_TOOL))
    ex = build(api)
    cluster = [mem("I switched to VS Code.", 1, entity="user", attribute="editor", value="VS Code"),
               mem("I use vim.", 30, entity="user", attribute="editor", value="vim")]
    out = await ex.merge(cluster, topic="tools")
    assert (out.text, out.entity, out.attribute, out.value) == (
        "The user uses VS Code (previously vim).", "user", "editor", "VS Code")
    body = api.body()
    assert body["tool_choice"]["name"] == MERGE_TOOL and body["tools"][0]["name"] == MERGE_TOOL
    assert body["system"] == ex.merge_prompt and ex.merge_prompt_version == "merge_v1"
    sent = body["messages"][0]["content"]
    assert sent.index("I use vim.") < sent.index("I switched to VS Code.")  # oldest first


async def test_merge_of_one_memory_makes_no_call():
    api = FakeAPI(message({}, name=MERGE_TOOL))
    out = await build(api).merge([mem("I use vim.", 1, type="fact", importance=0.6)])
    assert out.text == "I use vim." and out.importance == 0.6 and api.requests == []


async def test_merge_malformed_output_is_an_error():
    api = FakeAPI(message({"memories": []}, name=MERGE_TOOL))
    with pytest.raises(ExtractionError, match="record_merged_memory input does not match"):
        await build(api).merge([mem("a b", 1), mem("a c", 2)])


# -- prompts and settings ---------------------------------------------------------------------

async def test_prompt_file_override(tmp_path):
    custom = tmp_path / "my_prompt.md"
    custom.write_text("Extract only facts about cats.", encoding="utf-8")
    api = FakeAPI(message({"memories": []}))
    ex = build(api, prompt_file=str(custom))
    await ex.extract("My cat is called Tom.")
    assert api.body()["system"] == "Extract only facts about cats."
    assert ex.prompt_version.startswith("custom:my_prompt.md@")
    assert ex.merge_prompt_version == "merge_v1"


def test_missing_prompt_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="prompt_file"):
        build(FakeAPI(message({})), prompt_file=str(tmp_path / "nope.md"))


def test_settings_are_typed_and_closed():
    cfg = RecallConfig(plugins={"haiku": {"model": "claude-haiku-4-5", "timeout": "12",
                                          "max_retries": 1}})
    s = plugin_settings(cfg, "haiku", HaikuSettings)
    assert (s.model, s.timeout, s.max_retries, s.max_tokens) == ("claude-haiku-4-5", 12.0, 1, 4096)
    with pytest.raises(ConfigError, match="unknown key 'api_key'"):
        plugin_settings(RecallConfig(plugins={"haiku": {"api_key": "sk"}}), "haiku", HaikuSettings)


# -- factory ----------------------------------------------------------------------------------

def test_factory_without_key_is_a_config_error_with_the_fix(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError) as err:
        make_haiku(HaikuSettings())
    msg = str(err.value)
    assert "ANTHROPIC_API_KEY" in msg and 'extractor = "stub"' in msg


def test_factory_with_blank_key_is_a_config_error(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        make_haiku(HaikuSettings())


async def test_factory_with_key_builds_without_calling_out(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    ex = make_haiku(HaikuSettings(model="claude-haiku-4-5"))
    assert isinstance(ex, HaikuExtractor) and ex.name == "haiku" and ex.model == "claude-haiku-4-5"
    assert isinstance(ex._client, anthropic.AsyncAnthropic) and ex._client.api_key == KEY
    await ex.aclose()


# -- long texts -------------------------------------------------------------------------------

def _first_fact(request) -> dict[str, Any]:
    text = json.loads(request.content)["messages"][0]["content"]
    first = next(line for line in text.splitlines() if line.startswith("Fact"))
    return message({"memories": [{"text": first[:40], "type": "fact", "importance": 0.5}]})


def _facts(n: int) -> str:
    return "\n".join(f"Fact {i}: the billing service runs on host {i}." for i in range(n))


async def test_a_text_longer_than_one_output_budget_is_split_across_calls():
    async def answer(request):
        return httpx2.Response(200, json=_first_fact(request))

    api = FakeAPI(answer)
    ex = build(api, max_tokens=512)  # pieces of ~256 estimated tokens (~768 bytes)
    out = await ex.extract(_facts(120))  # ~5.5 KB
    assert len(api.requests) >= 7 and len(out) == len(api.requests)
    for i in range(len(api.requests)):
        assert len(api.body(i)["messages"][0]["content"].encode()) <= 256 * 3 + 40
    assert out[0].text.startswith("Fact 0:")
    assert [int(m.text.split()[1].rstrip(":")) for m in out] == sorted(
        int(m.text.split()[1].rstrip(":")) for m in out)


async def test_a_reply_cut_off_at_max_tokens_is_retried_as_two_halves():
    async def answer(request):
        text = json.loads(request.content)["messages"][0]["content"]
        if len(text) > 600:
            return httpx2.Response(200, json=message({"memories": [{"text": "Fa"}]},
                                                     stop_reason="max_tokens"))
        return httpx2.Response(200, json=_first_fact(request))

    api = FakeAPI(answer)
    ex = build(api, chunk_tokens=1000)
    out = await ex.extract(_facts(24))
    assert len(out) >= 2 and ex.usage.by_reason["split_after_cutoff"] >= 1
    assert ex.usage.calls == len(api.requests)
