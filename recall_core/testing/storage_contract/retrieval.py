"""Full text, vectors and their models, and times that round-trip as aware UTC."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ...models import ScoredId
from ...contracts import (Storage)
from ..helpers import delete, supersede
from .base import A, B, T0, HOSTILE_TERMS, ContractBase, assert_utc, memory, operation


class RetrievalTests(ContractBase):
    async def test_search_fulltext_finds_and_ranks(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        best = memory(A, "The user prefers dark mode in the code editor")
        partial = memory(A, "Dark chocolate is the user's favourite dessert")
        other = memory(A, "Python is the main programming language at work")
        filler = [memory(A, f"Unrelated note number {i} about gardening") for i in range(20)]
        await storage.insert_memories([best, partial, other, *filler])
        hits = await storage.search_fulltext(A, ["dark", "mode", "editor"], 10)
        assert all(isinstance(h, ScoredId) for h in hits)
        assert [h.id for h in hits][:2] == [best.id, partial.id]
        assert other.id not in {h.id for h in hits}
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert [h.id for h in await storage.search_fulltext(A, ["python"], 10)] == [other.id]
        assert await storage.search_fulltext(A, ["nonexistentword"], 10) == []
        assert await storage.search_fulltext(A, [], 10) == []
        assert len(await storage.search_fulltext(A, ["gardening"], 5)) == 5

    async def test_search_fulltext_matches_context_at_a_lower_weight(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        said = memory(A, "Melanie: I ran a charity race for mental health")
        answer = memory(A, "Caroline: It was last Saturday, it went great",
                        context="Melanie: when did you run the charity race?")
        filler = [memory(A, f"Filler line {i} about the weather") for i in range(10)]
        await storage.insert_memories([said, answer, *filler])
        hits = [h.id for h in await storage.search_fulltext(A, ["charity", "race"], 10)]
        assert hits[:2] == [said.id, answer.id]  # the own text outranks the context
        assert [h.id for h in await storage.search_fulltext(A, ["saturday"], 10)] == [answer.id]

    async def test_search_fulltext_unicode(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        cafe = memory(A, "Meeting at the café in München, 東京 next")
        await storage.insert_memories([cafe, memory(A, "nothing to see")])
        assert [h.id for h in await storage.search_fulltext(A, ["café"], 10)] == [cafe.id]
        assert [h.id for h in await storage.search_fulltext(A, ["münchen"], 10)] == [cafe.id]

    async def test_search_fulltext_only_active_rows_of_the_namespace(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        mine = memory(A, "quarterly budget review meeting")
        old = memory(A, "quarterly budget review meeting (old)")
        gone = memory(A, "quarterly budget deleted")
        theirs = memory(B, "quarterly budget review meeting")
        await storage.insert_memories([mine, old, gone, theirs])
        await supersede(storage, A, [old.id], T0, [])
        await delete(storage, A, gone.id)
        assert [h.id for h in await storage.search_fulltext(A, ["quarterly", "budget"], 10)] == [mine.id]
        assert [h.id for h in await storage.search_fulltext(B, ["quarterly"], 10)] == [theirs.id]
        assert await storage.search_fulltext("nobody", ["quarterly"], 10) == []

    async def test_search_fulltext_hostile_terms_never_raise(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        target = memory(A, "dark mode everywhere")
        await storage.insert_memories([target, memory(A, "light theme")])
        for term in HOSTILE_TERMS:
            hits = await storage.search_fulltext(A, [term], 10)
            assert isinstance(hits, list), term
            hits = await storage.search_fulltext(A, [term, "dark"], 10)
            assert target.id in {h.id for h in hits}, term
        assert isinstance(await storage.search_fulltext(A, HOSTILE_TERMS, 10), list)

    async def test_set_and_get_embeddings(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        a, b = memory(A, "a"), memory(A, "b")
        theirs = memory(B, "theirs")
        await storage.insert_memories([a, b, theirs])
        await storage.set_embeddings(A, [(a.id, self.vec(0.5, -0.25, 1))])
        assert await storage.get_embeddings(A, [a.id, b.id]) == {a.id: pytest.approx(self.vec(0.5, -0.25, 1))}
        assert await storage.get_embeddings(B, [a.id]) == {}
        await storage.set_embeddings(B, [(a.id, self.vec(9))])  # not B's memory: ignored
        assert await storage.get_embeddings(A, [a.id]) == {a.id: pytest.approx(self.vec(0.5, -0.25, 1))}
        await storage.set_embeddings(A, [(a.id, self.vec(0, 1))])  # overwrite
        assert await storage.get_embeddings(A, [a.id]) == {a.id: pytest.approx(self.vec(0, 1))}

    async def test_insert_memories_with_embedding_stores_it(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        m = memory(A, "with a vector", embedding=self.vec(0.25, 0.5))
        await storage.insert_memories([m])
        assert await storage.get_embeddings(A, [m.id]) == {m.id: pytest.approx(self.vec(0.25, 0.5))}
        hits = await storage.search_vectors(A, self.vec(0.25, 0.5), 5)
        assert [h.id for h in hits] == [m.id] and hits[0].score == pytest.approx(1.0, abs=1e-5)

    async def test_search_vectors_cosine_order(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        same = memory(A, "same direction, longer", embedding=self.vec(3, 0))
        near = memory(A, "near", embedding=self.vec(0.8, 0.6))
        orth = memory(A, "orthogonal", embedding=self.vec(0, 1))
        opposite = memory(A, "opposite", embedding=self.vec(-1, 0))
        bare = memory(A, "no vector")
        await storage.insert_memories([orth, opposite, near, same, bare])
        hits = await storage.search_vectors(A, self.vec(1, 0), 10)
        assert [h.id for h in hits] == [same.id, near.id, orth.id, opposite.id]
        assert [h.score for h in hits] == pytest.approx([1.0, 0.8, 0.0, -1.0], abs=1e-5)
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 2)] == [same.id, near.id]

    async def test_search_vectors_scoped_active_and_fresh(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        mine = memory(A, "mine", embedding=self.vec(0.6, 0.8))
        old = memory(A, "superseded", embedding=self.vec(1, 0))
        gone = memory(A, "deleted", embedding=self.vec(1, 0.01))
        theirs = memory(B, "theirs", embedding=self.vec(1, 0))
        await storage.insert_memories([mine, old, gone, theirs])
        await supersede(storage, A, [old.id], T0, [])
        await delete(storage, A, gone.id)
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [mine.id]
        # a write after a search is seen by the next search (no stale in-process index)
        newer = memory(A, "newer", embedding=self.vec(1, 0.1))
        await storage.insert_memories([newer])
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [newer.id, mine.id]
        await storage.set_embeddings(A, [(mine.id, self.vec(1, 0))])
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [mine.id, newer.id]
        assert [h.id for h in await storage.search_vectors(B, self.vec(1, 0), 10)] == [theirs.id]
        assert await storage.search_vectors("nobody", self.vec(1, 0), 10) == []

    async def test_vectors_record_their_model_and_never_mix(self, storage: Storage) -> None:
        # issue 14: search compares only one model's vectors; `recall reindex` finds the rest.
        self.need(storage, "vectors")
        self.need(storage, "embedding_models")
        a = memory(A, "made by a", embedding=self.vec(1, 0), embedding_model="model-a")
        b = memory(A, "made by b", embedding=self.vec(1, 0.1), embedding_model="model-b",
                   minutes=1)
        legacy = memory(A, "stored before model ids", embedding=self.vec(1, 0.2), minutes=2)
        bare = memory(A, "no vector", minutes=3)
        old_b = memory(A, "history made by b", embedding=self.vec(1, 0.3),
                       embedding_model="model-b", minutes=4)
        theirs = memory(B, "theirs", embedding=self.vec(1, 0), embedding_model="model-b")
        await storage.insert_memories([a, b, legacy, bare, old_b, theirs])
        await supersede(storage, A, [old_b.id], T0 + timedelta(minutes=5), [])

        async def found(model: str | None) -> set[str]:
            return {h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10, model=model)}

        assert await found("model-a") == {a.id, legacy.id}
        assert await found("model-b") == {b.id, legacy.id}
        assert await found(None) == {a.id, b.id, legacy.id}
        assert set(await storage.get_embeddings(A, [a.id, b.id, legacy.id, old_b.id],
                                                model="model-a")) == {a.id, legacy.id}
        assert set(await storage.get_embeddings(A, [a.id, b.id, old_b.id])) == {a.id, b.id, old_b.id}
        assert await storage.embedding_models(A) == {"model-a": 1, "model-b": 2, None: 1}
        assert await storage.embedding_models(None) == {"model-a": 1, "model-b": 3, None: 1}
        assert await storage.other_model_vectors(A, "model-a") == 1  # b; not legacy nor history
        assert await storage.other_model_vectors(A, "model-b") == 1
        assert await storage.other_model_vectors("nobody", "model-a") == 0

        redo = await storage.embeddings_to_redo(A, "model-a", 0, 10)
        assert [r.id for r in redo] == [b.id, legacy.id, old_b.id]  # insertion order
        assert (redo[0].namespace, redo[0].text, redo[0].session_id) == (A, "made by b", None)
        first = await storage.embeddings_to_redo(A, "model-a", 0, 1)
        assert [r.id for r in first] == [b.id]
        assert [r.id for r in await storage.embeddings_to_redo(A, "model-a", first[0].seq, 10)] \
            == [legacy.id, old_b.id]
        assert {r.id for r in await storage.embeddings_to_redo(None, "model-a", 0, 10)} \
            == {b.id, legacy.id, old_b.id, theirs.id}

        # Re-embedded with model-a: it leaves the redo list and joins model-a's searches
        # (an index built before the change follows it).
        await storage.set_embeddings(A, [(b.id, self.vec(0, 1))], model="model-a")
        assert [r.id for r in await storage.embeddings_to_redo(A, "model-a", 0, 10)] \
            == [legacy.id, old_b.id]
        assert await found("model-a") == {a.id, b.id, legacy.id}
        assert await found("model-b") == {legacy.id}
        assert await storage.other_model_vectors(A, "model-a") == 0
        assert await storage.embedding_models(A) == {"model-a": 2, "model-b": 1, None: 1}

    async def test_memory_sources_count_current_memories_by_recorded_provenance(
            self, storage: Storage) -> None:
        self.need(storage, "memory_sources")
        llm = {"extractor": "openai", "model": "smollm2", "prompt_version": "3"}
        jobs = {}
        for key, result in (("llm", llm), ("stub", {"extractor": "stub"}), ("old", None)):
            payload = {"text": key, **({"result": result} if result else {})}
            jobs[key], _ = await storage.enqueue(operation(A, key, payload=payload))
        theirs, _ = await storage.enqueue(operation(B, "b", payload={"result": llm}))
        rows = [memory(A, f"llm {i}", source_job_id=jobs["llm"].id) for i in range(3)]
        rows += [memory(A, "stub", source_job_id=jobs["stub"].id),
                 memory(A, "old", source_job_id=jobs["old"].id),
                 memory(A, "imported"), memory(A, "imported too"),
                 memory(A, "llm but superseded", source_job_id=jobs["llm"].id, valid_until=T0),
                 memory(B, "theirs", source_job_id=theirs.id)]
        await storage.insert_memories(rows)
        want = [{"extractor": "openai", "model": "smollm2", "prompt_version": "3", "memories": 3},
                {"extractor": None, "model": None, "prompt_version": None, "memories": 2},
                {"extractor": "", "model": None, "prompt_version": None, "memories": 1},
                {"extractor": "stub", "model": None, "prompt_version": None, "memories": 1}]
        assert await storage.memory_sources(A) == want
        assert await storage.memory_sources(None) == [{**want[0], "memories": 4}, *want[1:]]
        assert await storage.memory_sources("nobody") == []

    async def test_ids_missing_embeddings(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        a1, a2 = memory(A, "a1 text"), memory(A, "a2 text")
        b1 = memory(B, "b1 text")
        done = memory(A, "has one", embedding=self.vec(1))
        old = memory(A, "superseded without one")
        await storage.insert_memories([a1, a2, b1, done, old])
        await supersede(storage, A, [old.id], T0, [])
        missing = await storage.ids_missing_embeddings(100)
        assert sorted(missing) == sorted([(A, a1.id, "a1 text"), (A, a2.id, "a2 text"),
                                          (B, b1.id, "b1 text")])
        assert len(await storage.ids_missing_embeddings(2)) == 2
        await storage.set_embeddings(A, [(a1.id, self.vec(1)), (a2.id, self.vec(0, 1))])
        assert await storage.ids_missing_embeddings(100) == [(B, b1.id, "b1 text")]

    async def test_datetimes_round_trip_as_aware_utc(self, storage: Storage) -> None:
        ist = timezone(timedelta(hours=5, minutes=30))
        created = datetime(2026, 6, 1, 18, 45, 30, 250000, tzinfo=ist)
        stored, _ = await storage.enqueue(operation(A, created_at=created))
        assert stored.created_at == created
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.created_at == created
        await storage.fail_job(claimed.id, 1, "x", retry=False)
        failed = await storage.get_operation(A, claimed.id)
        assert failed is not None and failed.finished_at is not None
        assert_utc(stored.created_at, claimed.created_at, claimed.lease_until, failed.created_at,
                   failed.finished_at)
        m = memory(A, "t", created_at=created, valid_from=created)
        await storage.insert_memories([m])
        await supersede(storage, A, [m.id], created + timedelta(days=1), [])
        (row,) = await self.all_memories(storage, A, active_only=False)
        assert row.created_at == created and row.valid_until == created + timedelta(days=1)
        assert_utc(row.created_at, row.valid_from, row.valid_until)
