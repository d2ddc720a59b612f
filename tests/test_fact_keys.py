"""Issue 28: fact keys that read the same are one key, on SQLite and real Postgres.

Names that differ only in Unicode normal form, width, case or invisible characters are
spelt one way (`recall_core.kit.keys.key_form`) on every path that writes a key; here
through an import (plain statements and exact rows), then read back through the service's
history, inspect and search. The migration that merges keys stored before is checked per
backend (plugins/*/tests, `recall_core.testing.key_migration`)."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import pytest_asyncio
from hypothesis import given, settings, strategies as st

from recall_core import Extractor, hookimpl
from recall_core.admin.service import AdminService
from recall_core.config import RecallConfig
from recall_core.errors import RecallError
from recall_core.kit.attributes import canonical_attribute, canonical_entity, normalise_triple
from recall_core.kit.keys import key_form
from recall_core.server.runtime import build_runtime

from recall_testkit.backends import BACKENDS, PG_URL, bundled


@pytest_asyncio.fixture(params=BACKENDS)
async def runtime(request, tmp_path):
    db = str(tmp_path / "r.db") if request.param == "sqlite" else PG_URL
    cfg = RecallConfig(db=db, worker={"concurrency": 1, "poll_interval": 0.02, "yield_pause": 0},
                       decay={"interval": 0}, extractor="stub")
    rt = await build_runtime(cfg, bundled(postgres=request.param != "sqlite"))
    yield rt
    await rt.close()


def lines(*rows: dict) -> list[str]:
    return [json.dumps(r, ensure_ascii=True) for r in rows]


async def test_statements_spelt_apart_are_one_fact(runtime):
    ns = f"keys-{uuid.uuid4().hex[:8]}"
    admin = AdminService(runtime.service)
    await admin.import_memories("test", ns, lines(
        {"text": "Sarah lives in Berlin.", "entity": "Sarah", "attribute": "location",
         "value": "Berlin", "created_at": "2026-01-01T10:00:00+00:00"},
        # zero-width space, full-width capitals, a soft hyphen in the attribute
        {"text": "Sarah moved to Lisbon.", "entity": "\uff33a\u200brah", "attribute": "Loca\u00adtion",
         "value": "Lisbon", "created_at": "2026-02-01T10:00:00+00:00"},
        # ß and SS, a no-break space: one entity
        {"text": "The big street is red.", "entity": "big\u00a0stra\u00dfe", "attribute": "color",
         "value": "red", "created_at": "2026-01-01T10:00:00+00:00"},
        {"text": "The big street is blue.", "entity": "BIG  STRASSE", "attribute": "colour",
         "value": "blue", "created_at": "2026-03-01T10:00:00+00:00"}))
    # A person's spelling of the key finds the one timeline.
    timeline = await runtime.service.history(ns, "SA\u200bRAH", "Location")
    assert [(m.value, m.valid_until is None) for m in timeline] == [("Berlin", False),
                                                                    ("Lisbon", True)]
    street = await runtime.service.history(ns, "Big Straße", "color")
    assert [(m.value, m.valid_until is None) for m in street] == [("red", False), ("blue", True)]
    shown = (await runtime.service.inspect(ns))["memories"]
    assert sorted(m["value"] for m in shown) == ["Lisbon", "blue"]
    assert {(m["entity"], m["attribute"]) for m in shown} == {("sarah", "location"),
                                                              ("big strasse", "color")}
    assert (await runtime.service.search(ns, "Berlin"))["results"] == []


async def test_exact_rows_are_spelt_the_same_way(runtime):
    ns = f"keys-{uuid.uuid4().hex[:8]}"
    admin = AdminService(runtime.service)
    row = {"text": "I work at Acme.", "entity": "\uff55\uff53\uff45\uff52", "attribute": "Employer",
           "value": "Acme", "valid_from": "2026-01-01T10:00:00+00:00",
           "created_at": "2026-01-01T10:00:00+00:00"}
    await admin.import_memories("test", ns, lines(row))
    (m,) = await runtime.service.history(ns, "user", "employer")
    assert (m.entity, m.attribute, m.value) == ("user", "employer", "Acme")
    # A second current row of the same key, spelt apart: refused, nothing written.
    other = {**row, "text": "I work at Initech.", "entity": "us\u200ber", "value": "Initech"}
    with pytest.raises(RecallError):
        await admin.import_memories("test", f"{ns}-2", lines(row, other))
    assert (await runtime.service.inspect(f"{ns}-2"))["memories"] == []


class SpeltExtractor(Extractor):
    """An extractor as an LLM's output may be: the key spelt as the text's JSON says."""

    name = "spelt"

    async def extract(self, text, topic=""):
        from recall_core.models import ExtractedMemory

        fact = json.loads(text)
        return [ExtractedMemory(text=fact["say"], entity=fact["entity"],
                                attribute=fact["attribute"], value=fact["value"])]

    async def merge(self, memories, topic=""):
        raise NotImplementedError


class SpeltPlugin:
    @hookimpl
    def register_extractors(self, register):
        register("spelt", lambda settings: SpeltExtractor())


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_extractors_keys_spelt_apart_are_one_fact(backend, tmp_path):
    db = str(tmp_path / "r.db") if backend == "sqlite" else PG_URL
    pm = bundled(postgres=backend != "sqlite")
    pm.register(SpeltPlugin(), name="spelt")
    cfg = RecallConfig(db=db, worker={"concurrency": 1, "poll_interval": 0.02, "yield_pause": 0},
                       decay={"interval": 0}, extractor="spelt")
    rt = await build_runtime(cfg, pm)
    try:
        ns = f"keys-{uuid.uuid4().hex[:8]}"
        for entity, attribute, value, at in [
                ("Sarah", "employer", "Acme", "2026-01-01T10:00:00+00:00"),
                ("\u200bSARAH\ufeff", "Em\u00adployer", "Initech", "2026-02-01T10:00:00+00:00")]:
            text = json.dumps({"say": f"Sarah works at {value}.", "entity": entity,
                               "attribute": attribute, "value": value})
            ack = await rt.service.store(ns, text, created_at=at)
            for _ in range(400):
                op = await rt.storage.get_operation(ns, ack["job_id"])
                if op.status in ("done", "failed"):
                    break
                await asyncio.sleep(0.025)
            assert op.status == "done", op.error
        timeline = await rt.service.history(ns, "sarah", "employer")
        assert [(m.value, m.valid_until is None) for m in timeline] == [("Acme", False),
                                                                        ("Initech", True)]
        assert [m["value"] for m in (await rt.service.inspect(ns))["memories"]] == ["Initech"]
    finally:
        await rt.close()


# -- the normalisation itself ---------------------------------------------------------------
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u00ad", "\ufeff", "\u2060", "\u200e", "\ufe0f"]


@pytest.mark.parametrize("a,b", [
    ("Sarah", "s\u200barah"), ("Sarah", "\uff33\uff41\uff52\uff41\uff48"),
    ("Stra\u00dfe", "STRASSE"), ("caf\u00e9", "cafe\u0301"), ("new york", " New\u00a0\tYork "),
    ("\ufb01le", "FILE"), *[("user", f"us{c}er") for c in INVISIBLE]])
def test_names_a_person_reads_as_the_same_are_one_key(a, b):
    assert key_form(a) == key_form(b)
    assert normalise_triple(a, "location", "x")[:2] == normalise_triple(b, "Location", "x")[:2]
    assert normalise_triple("I", f"likes:{a}", "x") == normalise_triple("me", f"Likes:{b}", "x")


@pytest.mark.parametrize("a,b", [("sarah", "sara"), ("caf\u00e9", "cafe"), ("a b", "ab")])
def test_names_that_read_differently_stay_apart(a, b):
    assert key_form(a) != key_form(b)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=24))
def test_spelling_is_idempotent_and_canonical_names_are_already_spelt(text):
    once = key_form(text)
    assert key_form(once) == once
    for canonical in (canonical_entity(text), canonical_attribute(text)):
        assert key_form(canonical) == canonical, (text, canonical)
