"""A new fact ends the earlier statement, stored without a fact, that gave its old value
(`Extractor.reads_statements`, `ExtractedMemory.replaces`, `memory.writes.replaced_statements`),
through the service and the worker on real storage (SQLite, and Postgres with
RECALL_TEST_PG_URL).

Core ends only what is safe whatever an extractor says: rows still current, of this
namespace, stating no fact, said before the new memory, named by a memory whose fact is
single-valued. With the default (rule-based) extractor, "We monitor with Nagios." (a memory
without a fact) is ended by "Datadog is our monitoring now", so a question about the present
is never answered with Nagios."""

from __future__ import annotations

import uuid

import pytest

from recall_core import Extractor
from recall_core.contracts import KnownStatement
from recall_core.memory.known import READ_STATEMENTS
from recall_core.models import ExtractedMemory

from recall_testkit.backends import BACKENDS
from recall_testkit.extraction import runtime, stored


class Replacing(Extractor):
    """ "E | A | V | word" is a fact replacing the told statements that contain `word` (or the
    ids listed after "ids="); any other text is a memory without a fact."""

    name = "replacing"
    reads_known = True
    reads_statements = True

    def __init__(self) -> None:
        self.told: list[list[KnownStatement]] = []

    async def extract(self, text, topic="", known=(), statements=()):
        self.told.append(list(statements))
        if " | " not in text:
            return [ExtractedMemory(text=text)]
        entity, attribute, value, word = text.split(" | ")
        ids = word.removeprefix("ids=").split(",") if word.startswith("ids=") else \
            [s.id for s in statements if word in s.text]
        return [ExtractedMemory(text=text, entity=entity, attribute=attribute, value=value,
                                replaces=ids)]

    async def merge(self, memories, topic=""):
        raise NotImplementedError


async def current(rt, ns: str) -> dict[str, str]:
    rows, _ = await rt.storage.list_memories(ns, 100, 0)
    return {m.text: m.id for m in rows}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_new_fact_ends_the_statement_it_replaces(backend, tmp_path):
    ex = Replacing()
    rt = await runtime(backend, tmp_path, "replacing", ex)
    try:
        ns, other = (f"repl-{uuid.uuid4().hex[:8]}" for _ in range(2))
        await stored(rt, other, "we monitor with nagios too", 1)
        await stored(rt, ns, "we monitor with nagios", 1)
        await stored(rt, ns, "user | editor | vim | -", 2)
        old = (await current(rt, ns))["we monitor with nagios"]
        # told: this namespace's current memories without a fact, newest first
        await stored(rt, ns, "team | monitoring | Datadog | nagios", 3)
        assert [s.text for s in ex.told[-1]] == ["we monitor with nagios"]
        now = await current(rt, ns)
        assert "we monitor with nagios" not in now
        new = now["team | monitoring | Datadog | nagios"]
        [row] = await rt.storage.history(ns, "team", "monitoring")
        assert row.id == new
        ended = await rt.service.search(ns, "nagios", as_of="2026-03-02T12:00:00+00:00")
        assert [r["id"] for r in ended["results"]] == [old]   # it was true then
        assert (await rt.service.search(ns, "nagios"))["results"][0]["id"] == new
        # the other tenant's statement was never told, never ended
        assert "we monitor with nagios too" in await current(rt, other)
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_core_ends_only_what_is_safe(backend, tmp_path):
    ex = Replacing()
    rt = await runtime(backend, tmp_path, "replacing", ex)
    try:
        ns, other = (f"safe-{uuid.uuid4().hex[:8]}" for _ in range(2))
        await stored(rt, other, "foreign statement", 1)
        await stored(rt, ns, "user | editor | vim | -", 1)     # a fact, not a statement
        await stored(rt, ns, "later statement", 9)             # said after the new fact
        await stored(rt, ns, "liked statement", 1)
        before = await current(rt, ns)
        foreign = (await current(rt, other))["foreign statement"]
        ids = [foreign, before["user | editor | vim | -"], before["later statement"]]
        await stored(rt, ns, f"user | shell | zsh | ids={','.join(ids)}", 5)
        # a many-valued fact ends nothing of what it names
        await stored(rt, ns, f"user | likes | tea | ids={before['liked statement']}", 6)
        after = await current(rt, ns)
        assert set(before) <= set(after)
        assert "foreign statement" in await current(rt, other)
        assert [m.value for m in await rt.service.history(ns, "user", "editor")] == ["vim"]
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_default_extractor_ends_an_unkeyed_earlier_value(backend, tmp_path):
    rt = await runtime(backend, tmp_path, "stub")
    try:
        ns = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "We monitor with Nagios.", 1)
        await stored(rt, ns, "I live in Lisbon.", 2)
        assert "We monitor with Nagios." in await current(rt, ns)   # no rule keyed it
        await stored(rt, ns, "Datadog is our monitoring now, the dashboards are way better", 3)
        now = await current(rt, ns)
        assert "We monitor with Nagios." not in now
        assert "I live in Lisbon." in now
        found = await rt.service.search(ns, "What do we use for monitoring?")
        assert "Datadog" in found["results"][0]["text"]
        assert not any("Nagios" in r["text"] for r in found["results"])
        # unsure: a hedge about another tool ends nothing
        other = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, other, "We might monitor with Zabbix someday.", 1)
        await stored(rt, other, "Datadog is our monitoring now.", 2)
        assert "We might monitor with Zabbix someday." in await current(rt, other)
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_earlier_statement_naming_a_value_of_the_new_ones_kind_is_ended(backend,
                                                                                 tmp_path):
    """ "Our team basically lives in Slack" stated no fact; "everything's on Microsoft Teams"
    later gives the team's chat tool a value of the same kind (a chat tool, one at a time for
    a team), for the same side (the team): the earlier statement is ended. A statement of
    another kind, or of someone else, stays."""
    rt = await runtime(backend, tmp_path, "stub")
    try:
        ns = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "Our team basically lives in Slack, huddles all day.", 1)
        await stored(rt, ns, "My sister's startup lives in Discord.", 2)
        await stored(rt, ns, "The bookings app I built for the salon uses MySQL", 3)
        await stored(rt, ns, "Company shut down our Slack workspace. Everything's on Microsoft "
                             "Teams as of this week.", 4)
        await stored(rt, ns, "bookings app's on Postgres, can you help me tune a query?", 5)
        now = await current(rt, ns)
        assert "Our team basically lives in Slack, huddles all day." not in now
        assert "The bookings app I built for the salon uses MySQL" not in now
        assert "My sister's startup lives in Discord." in now
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_claude_names_the_statement_it_replaces(backend, tmp_path):
    """The Claude extractor (the real anthropic SDK, its HTTP transport replaced by a model
    that answers as Claude would): the worker tells it this namespace's related statements,
    its `replaces` number becomes their id, and core ends the statement."""
    import json

    import httpx2

    from recall_extractors.haiku import EXTRACT_TOOL, HaikuExtractor
    from recall_extractors.settings import DEFAULT_MODEL, HaikuSettings

    prompts: list[str] = []

    async def claude(request: httpx2.Request) -> httpx2.Response:
        sent = json.loads(request.content)["messages"][0]["content"]
        sent = sent if isinstance(sent, str) else "".join(p.get("text", "") for p in sent)
        prompts.append(sent)
        text = sent.rsplit("<text>", 1)[1].split("</text>")[0].strip()
        item = {"text": text, "type": "fact", "importance": 0.7}
        if text.startswith("Datadog"):
            number = next(line[1:line.index("]")] for line in sent.splitlines()
                          if line.startswith("[") and "Nagios" in line)
            item.update(entity="team", attribute="monitoring", value="Datadog",
                        replaces=[int(number)])
        return httpx2.Response(200, json={
            "id": "msg_01", "type": "message", "role": "assistant", "model": DEFAULT_MODEL,
            "content": [{"type": "tool_use", "id": "toolu_01", "name": EXTRACT_TOOL,
                         "input": {"memories": [item]}}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 400, "output_tokens": 50}})

    ex = HaikuExtractor(HaikuSettings(), api_key="sk-ant-test-0000",
                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(claude)))
    ex.name = "claude-replaced-transport"
    rt = await runtime(backend, tmp_path, ex.name, ex)
    try:
        ns, other = (f"claude-{uuid.uuid4().hex[:8]}" for _ in range(2))
        await stored(rt, other, "We monitor with Nagios and Zabbix.", 1)
        await stored(rt, ns, "We monitor with Nagios.", 1)
        await stored(rt, ns, "Chat is on Slack.", 2)
        await stored(rt, ns, "Datadog is our monitoring now.", 3)
        assert "[1] We monitor with Nagios." in prompts[-1]
        assert "Slack" not in prompts[-1] and "Zabbix" not in prompts[-1]
        now = await current(rt, ns)
        assert "We monitor with Nagios." not in now and "Chat is on Slack." in now
        found = await rt.service.search(ns, "What do we use for monitoring?")
        assert not any("Nagios" in r["text"] for r in found["results"])
        assert "We monitor with Nagios and Zabbix." in await current(rt, other)
    finally:
        await rt.close()
        await ex.aclose()


def test_statements_read_are_bounded():
    assert 0 < READ_STATEMENTS <= 100
