"""`RankerContract`: the conformance suite every ranker subclasses (ours and third-party).

    from recall_core.testing import RankerContract

    class TestMyRanker(RankerContract):
        def make_ranker(self):
            return MyRanker(MySettings())

        @pytest_asyncio.fixture
        async def storage(self, tmp_path):       # an opened Storage on an empty database
            s = make_storage(f"sqlite:///{tmp_path / 'r.db'}")
            await s.open()
            yield s
            await s.close()

It checks what core relies on (`recall_core.contracts.ranking`): the declared members and
capabilities, that `rank` answers only active memories of the namespace asked, at most
`limit`, that `rank_pool` answers only ids of the rows it was given, that `evidence` stays
within 0..1 for a calibrated ranker, that an embedder writes unit vectors of its width, and
that forgetting a namespace is always safe. It asks nothing about quality: a ranker that
ignores the query (recency, say) passes; a subclass adds its own quality tests.
"""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta

import pytest
import pytest_asyncio

from ..contracts import Embedder, NotReady, Ranker, Storage
from ..models import Memory, ScoredId, utcnow

A, B = "contract-ranker-a", "contract-ranker-b"
TEXTS = ("the user drinks green tea every morning", "deploys happen on tuesdays",
         "the team uses postgres for storage", "green tea is the user's favourite drink",
         "the cat is called miso")


class RankerContract:
    #: Seconds to wait for an embedder that loads in the background.
    ready_timeout = 120.0

    def make_ranker(self) -> Ranker:
        raise NotImplementedError("RankerContract subclasses return their ranker here")

    @pytest_asyncio.fixture
    async def ranker(self) -> Ranker:
        ranker = self.make_ranker()
        if ranker.embedder is not None:
            await asyncio.to_thread(ranker.embedder.wait_ready, self.ready_timeout)
        return ranker

    async def seed(self, storage: Storage, ranker: Ranker, namespace: str,
                   texts: tuple[str, ...] = TEXTS) -> list[Memory]:
        """Active memories of `texts` in `namespace`, one minute apart, with vectors of the
        ranker's embedder when it has one."""
        start = utcnow() - timedelta(hours=1)
        rows = [Memory(namespace=namespace, text=t, created_at=start + timedelta(minutes=i),
                       valid_from=start + timedelta(minutes=i)) for i, t in enumerate(texts)]
        if ranker.embedder is not None and storage.capabilities.vectors:
            for m, vec in zip(rows, await ranker.embedder.embed(texts)):
                m.embedding = vec
                m.embedding_model = ranker.embedder.model_id or ranker.embedder.name
        await storage.insert_memories(rows)
        return rows

    @staticmethod
    async def ranked(ranker: Ranker, storage: Storage, namespace: str, query: str,
                     limit: int) -> list[ScoredId]:
        try:
            return await ranker.rank(storage, namespace, query, limit)
        except NotReady as exc:  # allowed by the contract: the search says so and goes on
            pytest.skip(f"{ranker.name} is not ready on this storage: {exc}")

    # == declared members ====================================================================
    async def test_declares_the_contract(self, ranker: Ranker) -> None:
        assert isinstance(ranker, Ranker)
        assert isinstance(ranker.name, str) and ranker.name
        assert isinstance(ranker.calibrated, bool)
        assert ranker.embedder is None or isinstance(ranker.embedder, Embedder)

    # == rank ================================================================================
    async def test_rank_answers_only_active_memories_of_the_namespace(
            self, ranker: Ranker, storage: Storage) -> None:
        mine = {m.id for m in await self.seed(storage, ranker, A)}
        theirs = {m.id for m in await self.seed(storage, ranker, B)}
        hits = await self.ranked(ranker, storage, A, "green tea", 10)
        assert all(isinstance(h, ScoredId) for h in hits)
        assert {h.id for h in hits} <= mine and not {h.id for h in hits} & theirs

    async def test_rank_gives_at_most_limit(self, ranker: Ranker, storage: Storage) -> None:
        await self.seed(storage, ranker, A)
        assert len(await self.ranked(ranker, storage, A, "green tea", 2)) <= 2

    async def test_rank_on_an_empty_namespace_is_empty(self, ranker: Ranker,
                                                       storage: Storage) -> None:
        assert await self.ranked(ranker, storage, A, "green tea", 10) == []

    async def test_rank_leaves_out_superseded_memories(self, ranker: Ranker,
                                                       storage: Storage) -> None:
        rows = await self.seed(storage, ranker, A)
        ended = rows[0]
        async with storage.write(A) as tx:
            await tx.end([(ended.id, utcnow(), None)])
        hits = await self.ranked(ranker, storage, A, "green tea", 10)
        assert ended.id not in {h.id for h in hits}

    # == rank_pool ===========================================================================
    async def test_rank_pool_answers_only_ids_of_the_pool(self, ranker: Ranker,
                                                          storage: Storage) -> None:
        rows = await self.seed(storage, ranker, A)
        pool = rows[:3]
        vectors = {m.id: m.embedding for m in pool if m.embedding is not None}
        hits = await ranker.rank_pool("green tea", pool, vectors, 10)
        assert all(isinstance(h, ScoredId) for h in hits)
        assert {h.id for h in hits} <= {m.id for m in pool}
        assert len(await ranker.rank_pool("green tea", pool, vectors, 1)) <= 1

    async def test_rank_pool_of_nothing_is_empty(self, ranker: Ranker) -> None:
        assert await ranker.rank_pool("green tea", [], {}, 10) == []

    # == optional capabilities ===============================================================
    async def test_evidence_of_a_calibrated_ranker_is_between_0_and_1(
            self, ranker: Ranker, storage: Storage) -> None:
        if not ranker.calibrated:
            pytest.skip(f"{ranker.name} declares calibrated = False")
        await self.seed(storage, ranker, A)
        hits = await self.ranked(ranker, storage, A, "green tea", 10)
        assert hits, "a calibrated ranker should find the seeded tea memories"
        for h in hits:
            assert 0.0 <= ranker.evidence(h.score) <= 1.0

    async def test_embedder_writes_unit_vectors_of_its_width(self, ranker: Ranker) -> None:
        if ranker.embedder is None:
            pytest.skip(f"{ranker.name} has no embedder")
        embedder = ranker.embedder
        assert embedder.ready, f"{embedder.name} did not load within {self.ready_timeout} s"
        vectors = await embedder.embed(["green tea", "deploys on tuesdays"])
        assert len(vectors) == 2 and embedder.dim > 0
        for v in vectors:
            assert len(v) == embedder.dim
            assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-3)
        assert isinstance(embedder.model_id or embedder.name, str)

    async def test_embedder_topic_scale_separates_unrelated_from_one_topic(
            self, ranker: Ranker) -> None:
        """`topic_scale` is (unrelated, one topic): search's newer-first bars are read
        through it, so it must be ordered, and two texts on one topic must sit nearer the
        second than two unrelated ones do."""
        if ranker.embedder is None:
            pytest.skip(f"{ranker.name} has no embedder")
        lo, hi = ranker.embedder.topic_scale
        assert -1.0 <= lo < hi <= 1.0, ranker.embedder.topic_scale
        a, b, c = await ranker.embedder.embed(["I live in Berlin.",
                                               "We moved to Munich last month.",
                                               "Our deploys go out on Tuesdays."])
        same = sum(x * y for x, y in zip(a, b))
        other = sum(x * y for x, y in zip(a, c))
        assert same > other, (same, other)

    async def test_forgetting_a_namespace_is_always_safe(self, ranker: Ranker,
                                                         storage: Storage) -> None:
        await self.seed(storage, ranker, A)
        await self.ranked(ranker, storage, A, "green tea", 10)
        ranker.forget_namespace(A)
        ranker.forget_namespace("never-seen")
        await storage.delete_namespace(A)
        assert await self.ranked(ranker, storage, A, "green tea", 10) == []
