"""Evidence on a 0..1 scale that means the same for every ranker (`Ranker.evidence`)."""

from __future__ import annotations


def ramp(x: float, lo: float, hi: float) -> float:
    """0 at or below `lo`, 1 at or above `hi`, linear between: a calibrated similarity."""
    if hi <= lo:
        return 1.0 if x >= hi else 0.0
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))
