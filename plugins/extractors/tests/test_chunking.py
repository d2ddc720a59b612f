"""Splitting long texts for LLM calls, and the per-minute budget's arithmetic."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_extractors.budget import BudgetExceeded, RateBudget
from recall_extractors.chunking import _split, estimate_tokens, split_text
from recall_extractors.llm import piece_tokens


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3000),
       limit=st.integers(2, 400))  # a 4-byte character needs 2 estimated tokens
def test_pieces_fit_and_join_back_into_the_text(text, limit):
    pieces = split_text(text, limit)
    assert all(estimate_tokens(p) <= limit for p in pieces)
    everything = _split(text, limit, 0)
    assert "".join(everything) == text
    # Only whitespace-only pieces are dropped.
    assert pieces == [p for p in everything if p.strip()]


def test_gentlest_boundary_first():
    para = ("This is a sentence about the deploy process. " * 4).strip()
    text = "\n\n".join([para] * 6)
    pieces = split_text(text, estimate_tokens(para) + 5)
    assert [p.strip() for p in pieces] == [para] * 6  # whole paragraphs, never mid-sentence
    pieces = split_text(para, 30)
    assert all(p.rstrip().endswith(".") for p in pieces)  # sentence ends before spaces


def test_a_word_longer_than_the_limit_is_cut_without_breaking_characters():
    text = "€" * 100  # 3 bytes each
    pieces = split_text(text, 10)
    assert "".join(pieces) == text and all(len(p.encode()) <= 30 for p in pieces)


def test_a_text_of_the_largest_allowed_size_fits_the_output_budget():
    text = ("I moved to Berlin last year and I work at Acme on the billing service. " * 4000)
    text = text[:256 * 1024]
    size = piece_tokens(None, 4096, "prompt", None)
    pieces = split_text(text, size)
    assert size == 2048 and all(estimate_tokens(p) <= 2048 for p in pieces)
    assert 40 <= len(pieces) <= 50


def test_piece_size_respects_the_context_window():
    prompt = "x" * 3000  # ~1000 tokens
    assert piece_tokens(4096, 1024, prompt, None) == 512        # half the output budget
    assert piece_tokens(4096, 1024, prompt, 5000) < 4096 - 1000 - 1024
    with pytest.raises(ValueError, match="leaves no room"):
        piece_tokens(2048, 1024, prompt, None)


# -- budget -----------------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_budget_waits_for_the_oldest_spending_to_leave_the_window():
    clock = Clock()
    budget = RateBudget(None, 10_000, 60, clock=clock, sleep=clock.sleep)

    async def run() -> None:
        await budget.reserve(6000)
        clock.now = 20
        r = await budget.reserve(3000)
        r.settle(1000)  # the server reported less than estimated
        clock.now = 30
        await budget.reserve(3000)          # 6000 + 1000 + 3000 fits
        assert clock.slept == []
        await budget.reserve(5000)          # must wait for the 6000 at t=0 to expire
        assert clock.slept == [30.0] and budget.used() == (3, 9000)

    asyncio.run(run())


def test_budget_gives_up_after_max_wait():
    clock = Clock()
    budget = RateBudget(1, None, 10, clock=clock, sleep=clock.sleep)

    async def run() -> None:
        await budget.reserve(1)
        with pytest.raises(BudgetExceeded) as err:
            await budget.reserve(1)
        assert not err.value.permanent and "max_wait = 10s" in str(err.value)
        assert clock.slept == []  # it did not sleep only to fail

    asyncio.run(run())
