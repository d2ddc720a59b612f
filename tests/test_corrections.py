"""A person's correction (recall_core.memory.corrections): a new memory supersedes the old one,
history kept, on real SQLite through the service."""

from __future__ import annotations

import pytest

from recall_core.errors import InvalidParam, MemoryNotFound
from recall_core.models import Memory


async def test_correction_supersedes_and_keeps_history(runtime):
    old = Memory(namespace="u", text="The user lives in Berlin.", entity="user",
                 attribute="location", value="Berlin", importance=0.6, topic="home",
                 session_id="s1", source_job_id="j1")
    await runtime.storage.insert_memories([old])
    new = await runtime.service.correct("u", old.id, text="The user lives in Potsdam.",
                               value="Potsdam")
    assert (new.text, new.value, new.topic, new.session_id, new.importance) == \
        ("The user lives in Potsdam.", "Potsdam", "home", "s1", 0.6)
    history = await runtime.service.history("u", "user", "location")
    assert [(m.value, m.valid_until is None) for m in history] == [("Berlin", False), ("Potsdam", True)]
    assert history[0].superseded_by == new.id
    found = await runtime.service.search("u", "where does the user live", limit=5)
    assert [r["text"] for r in found["results"]] == ["The user lives in Potsdam."]
    with pytest.raises(MemoryNotFound):  # the old version is history now
        await runtime.service.correct("u", old.id, text="again")
    with pytest.raises(MemoryNotFound):  # another namespace's memory
        await runtime.service.correct("other", new.id, text="mine now")


async def test_correction_validates(runtime):
    m = Memory(namespace="u", text="Deploys on Thursdays.", importance=0.5)
    await runtime.storage.insert_memories([m])
    with pytest.raises(InvalidParam, match="Nothing changed"):
        await runtime.service.correct("u", m.id, text="Deploys on Thursdays.",
                             importance=0.50001)
    with pytest.raises(InvalidParam):
        await runtime.service.correct("u", m.id, text="   ")
    with pytest.raises(InvalidParam):
        await runtime.service.correct("u", m.id, type="opinion")
    with pytest.raises(InvalidParam):
        await runtime.service.correct("u", m.id, importance=1.5)
    new = await runtime.service.correct("u", m.id, type="procedure", importance=0.9)
    assert (new.type, new.importance, new.text) == ("procedure", 0.9, "Deploys on Thursdays.")


async def test_an_edited_text_is_read_by_the_statement_rules(runtime):
    """The inspector's Edit of "I moved to Lisbon." into "I moved to Porto." stores the fact
    Porto (it used to keep location = Lisbon under the new text): the timeline reads Lisbon,
    then Porto."""
    await runtime.service.store("u", "I moved to Lisbon.")
    await drain(runtime)
    (lisbon,) = await runtime.service.history("u", "user", "location")
    new = await runtime.service.correct("u", lisbon.id, text="I moved to Porto.",
                                        value=lisbon.value)  # the form sends the old value
    assert (new.attribute, new.value) == ("location", "Porto")
    history = await runtime.service.history("u", "user", "location")
    assert [(m.value, m.valid_until is None) for m in history] == [("Lisbon", False),
                                                                   ("Porto", True)]


async def test_text_and_value_that_disagree_are_refused_and_change_nothing(runtime):
    await runtime.service.store("u", "I moved to Lisbon.")
    await drain(runtime)
    (lisbon,) = await runtime.service.history("u", "user", "location")
    with pytest.raises(InvalidParam, match="text says location is 'Porto'.*value field says 'Faro'"):
        await runtime.service.correct("u", lisbon.id, text="I moved to Porto.", value="Faro")
    with pytest.raises(InvalidParam, match="does not state this memory's fact"):
        await runtime.service.correct("u", lisbon.id, text="Nice weather today.")
    assert [m.value for m in await runtime.service.history("u", "user", "location")] == ["Lisbon"]
    # A value set in the form decides when the text's wording is not one the rules read.
    new = await runtime.service.correct("u", lisbon.id, text="Nice weather today.", value="Faro")
    assert new.value == "Faro"


async def drain(runtime):
    """Run the queued extraction jobs as the worker would (the fixture's runtime has none)."""
    from recall_core.jobs.worker import Worker

    worker = Worker(runtime.storage, runtime.extractor, runtime.embedder, runtime.config)
    while (op := await runtime.storage.claim_job(60)) is not None:
        await worker.run_one(op)
