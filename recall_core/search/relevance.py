"""Absolute evidence that a memory answers a query, on a 0..1 scale that means the same in
every search.

Reciprocal rank fusion keeps only ranks: the nearest neighbour of a gibberish query is
"first" just like a real match, so fused scores alone cannot be thresholded. Evidence is what
the candidates themselves show, independent of how many other candidates there are:

* **term coverage**: the share of the query's content terms (stemmed, stop words removed)
  that the memory's text contains. Gibberish covers nothing.
* **calibrated similarity**: a ranker may map its own scores to 0..1 with an
  ``evidence(score) -> float`` method (the dense ranker maps cosine similarity through a
  ramp calibrated per model: the cosine that nonsense and off-topic queries reach -> 0, the
  typical cosine of a query and its answer -> 1). A candidate that ranker did not return
  gets the evidence of its weakest hit: a bound, since it ranked below all of them.

A memory's evidence is the larger of the two (either kind alone is enough: an answer may
share no word with its question, or match words without being close in embedding space),
divided by SATURATION and capped at 1: half the query's terms, or a cosine half-way up the
calibrated ramp, is full support.
The search score multiplies it in (search.combine), so `score_threshold` can drop hits
nothing supports. Calibration and the documented threshold: bench/RESULTS.md ("Scores").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from ..models import Memory, ScoredId
from ..kit.text import index_tokens, query_terms, token_set

#: Evidence at or above this counts in full: the score only demotes what little supports, and
#: among well-supported memories the fused ranks decide (bench/RESULTS.md "Scores": with 1.0,
#: i.e. evidence multiplied in as is, recall@10 fell 0.003-0.005 on both halves).
SATURATION = 0.5

#: (evidence function of a ranker, that ranker's hits best first)
EvidenceSource = tuple[Callable[[float], float], Sequence[ScoredId]]


_VOWELS = frozenset("aeiouy")


def _key(stem: str) -> str:
    """A stem folded once more so inflections meet: textproc's light stemmer leaves "theme"
    vs "them(es)", "running" -> "runn" vs "run", "use" vs "us(es)" apart."""
    if len(stem) > 3 and stem.endswith("e"):
        stem = stem[:-1]
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[-1] not in "ls":
        stem = stem[:-1]
    return stem


@functools.lru_cache(maxsize=8192)
def _text_keys(text: str) -> frozenset[str]:
    return frozenset(_key(t) for t in token_set(text))


def query_stems(query: str) -> frozenset[str]:
    """The query's content terms, stemmed and folded like the memories' (`_key`)."""
    return frozenset(_key(t) for t in index_tokens(" ".join(query_terms(query))))


def coverage(stems: frozenset[str], text: str) -> float:
    """Share of the query's stems found in `text` (0 when the query has none)."""
    if not stems:
        return 0.0
    return len(stems & _text_keys(text)) / len(stems)


def evidence(query: str, memories: Sequence[Memory],
             sources: Sequence[EvidenceSource]) -> dict[str, float]:
    """Evidence in 0..1 for each memory (see the module docstring).

    Without any calibrated ranker (no dense ranker, or it is warming up) term coverage alone
    would re-rank the keyword ranker's list, and it ranks worse than BM25 (LoCoMo: recall@10
    -0.035 / -0.012 on the two halves): evidence is then only whether the memory was a
    candidate at all, i.e. 1 for every candidate (gibberish has none)."""
    stems = query_stems(query)
    calibrated: list[tuple[dict[str, float], float]] = []
    for fn, hits in sources:
        if not hits:
            continue
        scores = {h.id: _clip(fn(h.score)) for h in hits}
        calibrated.append((scores, min(scores.values())))
    if not calibrated:
        return {m.id: 1.0 for m in memories}
    out: dict[str, float] = {}
    for m in memories:
        best = coverage(stems, m.text)
        for scores, floor in calibrated:
            best = max(best, scores.get(m.id, floor))
        out[m.id] = min(1.0, best / SATURATION)
    return out


def _clip(x: float) -> float:
    return min(1.0, max(0.0, float(x)))
