"""Compound statements the rule-based extractor splits: a list of tools of different kinds,
and a request said after a fact, each its own memory."""

from __future__ import annotations

import pytest

from recall_extractors import StubSettings, make_stub


@pytest.fixture(scope="module")
def stub():
    return make_stub(StubSettings())


async def rows(stub, text: str) -> list[tuple[str, str | None, str | None]]:
    return [(m.text, m.attribute, m.value) for m in await stub.extract(text)]


async def test_a_list_of_tools_of_different_kinds_is_one_memory_each(stub):
    assert await rows(stub, "I use Bitwarden and Logseq.") == [
        ("I use Bitwarden.", "password_manager", "Bitwarden"),
        ("I use Logseq.", "notes_app", "Logseq")]
    # Not a list: the words between the values say more than "and".
    out = await rows(stub, "I use vim inside tmux.")
    assert out and all("vim" in t and "tmux" in t for t, _, _ in out)


async def test_a_request_after_a_fact_is_its_own_memory(stub):
    assert await rows(stub, "I'm in Lisbon, and please use metric units.") == [
        ("I'm in Lisbon", "location", "Lisbon"), ("please use metric units.", None, None)]
