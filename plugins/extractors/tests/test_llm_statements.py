"""The LLM extractors read earlier statements stored without a fact (`reads_statements`):
the ones that share a word with the text are numbered in the prompt, and the numbers a model
puts in a memory's `replaces` become those statements' ids, for a one-valued fact only.
Through the real anthropic SDK with its HTTP transport replaced (as test_known does)."""

from __future__ import annotations

import json

import httpx2

from recall_core.contracts import KnownStatement as S
from recall_core.kit.inventory_text import EARLIER_MAX, related_statements
from recall_extractors.haiku import EXTRACT_TOOL, HaikuExtractor
from recall_extractors.settings import DEFAULT_MODEL, HaikuSettings


class FakeAPI:
    """The Messages API answering each request with the next queued tool input."""

    def __init__(self, *replies: dict):
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        return httpx2.Response(200, json={
            "id": "msg_01", "type": "message", "role": "assistant", "model": DEFAULT_MODEL,
            "content": [{"type": "tool_use", "id": "toolu_01", "name": EXTRACT_TOOL,
                         "input": reply}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 400, "output_tokens": 50}})

    def asks_replaces(self, i: int = -1) -> bool:
        """Whether the tool's schema offered `replaces` (only with an <earlier> block: a
        field a small model has no use for can make it run off its output budget)."""
        return "replaces" in json.dumps(json.loads(self.requests[i].content)["tools"])

    def sent(self, i: int = -1) -> str:
        content = json.loads(self.requests[i].content)["messages"][0]["content"]
        return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def memory(text, entity=None, attribute=None, value=None, replaces=None) -> dict:
    out = {"text": text, "type": "fact", "importance": 0.7, "entity": entity,
           "attribute": attribute, "value": value}
    if replaces is not None:
        out["replaces"] = replaces
    return out


def extractor(api: FakeAPI) -> HaikuExtractor:
    return HaikuExtractor(HaikuSettings(), api_key="sk-ant-test-0000",
                          http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)))


STATEMENTS = [S("id-chat", "Chat is on Slack."), S("id-nagios", "We monitor with Nagios."),
              S("id-lunch", "Lunch was great today.")]


async def test_the_related_statements_are_numbered_and_named_back_by_id():
    api = FakeAPI({"memories": [memory("Datadog is our monitoring now.", "team", "monitoring",
                                       "Datadog", [1, 7, "x"])]})
    ex = extractor(api)
    assert ex.reads_statements
    out = await ex.extract("Datadog is our monitoring now.", statements=STATEMENTS)
    assert [(m.attribute, m.value, m.replaces) for m in out] == \
        [("monitoring", "Datadog", ["id-nagios"])]   # 7 and "x" name nothing: ignored
    sent = api.sent()
    assert "<earlier>" in sent and "[1] We monitor with Nagios." in sent
    assert "Slack" not in sent and "Lunch" not in sent   # unrelated: not sent, not paid for
    assert sent.index("</earlier>") < sent.index("<text>")
    assert api.asks_replaces()
    await ex.aclose()


async def test_nothing_is_replaced_by_a_fact_of_several_values_or_without_statements():
    api = FakeAPI({"memories": [memory("I like Datadog's monitoring dashboards.", "user",
                                       "likes", "Datadog dashboards", [1])]},
                  {"memories": [memory("Datadog is our monitoring now.", "team", "monitoring",
                                       "Datadog", [1])]})
    ex = extractor(api)
    out = await ex.extract("I like Datadog's monitoring dashboards.", statements=STATEMENTS)
    assert out and all(m.replaces == [] for m in out)
    # No statement shares a word: no block, and a number the model invents names nothing.
    out = await ex.extract("Datadog is our monitoring now.",
                           statements=[S("id-chat", "Chat is on Slack.")])
    assert out[0].replaces == [] and "<earlier>" not in api.sent()
    assert not api.asks_replaces()
    await ex.aclose()


async def test_one_text_in_two_namespaces_names_each_ones_statements():
    """The memo shares a piece already paid for, but never another namespace's ids."""
    reply = {"memories": [memory("Datadog is our monitoring now.", "team", "monitoring",
                                 "Datadog", [1])]}
    api = FakeAPI(reply, reply)
    ex = extractor(api)
    text = "Datadog is our monitoring now."
    a = await ex.extract(text, statements=[S("ns-a-1", "We monitor with Nagios.")])
    b = await ex.extract(text, statements=[S("ns-b-1", "We monitor with Nagios.")])
    assert a[0].replaces == ["ns-a-1"] and b[0].replaces == ["ns-b-1"]
    assert len(api.requests) == 2
    await ex.aclose()


def test_related_statements_are_the_newest_few_sharing_a_word():
    many = [S(f"id-{i}", f"Monitoring note {i}.") for i in range(30)]
    got = related_statements("What about monitoring?", [(s.id, s.text) for s in many])
    assert [i for i, _ in got] == [f"id-{i}" for i in range(EARLIER_MAX)]
    assert related_statements("What about it?", [(s.id, s.text) for s in many]) == []
