"""The statistics a balance report rests on, in plain Python with exact formulas.

Why these:
- **Wilson score intervals** for every rate: unlike the textbook `p ± z·sqrt(p(1-p)/n)` they
  stay inside [0, 1] and keep close to their nominal 95 % coverage at small n and at rates
  near 0 or 1 (a seat that never wins in 50 games still gets a useful upper bound).
- **Pearson's chi-square goodness of fit** across seats: one test per cell asks "are the
  wins spread over the seats as a fair game would spread them?"; per-seat intervals alone
  would test each seat separately and multiply false alarms.
- **Benjamini-Hochberg** across the whole grid: a sweep runs dozens of such tests, and at
  5 % each a handful would fire by chance. BH keeps the expected share of false flags among
  the flagged cells at q, and is far less conservative than Bonferroni.

The chi-square tail uses the closed forms for whole-number degrees of freedom (seats minus
one is always whole), so no special-function library is needed and results are exact to
floating-point rounding; tests check them against published table values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Two-sided 95 %: the standard normal quantile at 0.975.
Z95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"successes {successes} outside 0..{trials}")
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # Clamp the rounding at the edges: 0/n must give exactly 0 as its lower bound.
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == trials else min(1.0, centre + half)
    return lo, hi


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with `df` (a positive whole number) degrees of freedom.

    Even df: exp(-x/2) · Σ_{k<df/2} (x/2)^k / k!.  Odd df: 2·Q(√x) plus a similar finite sum,
    where Q is the standard normal upper tail. Both are exact series, not approximations.
    """
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a positive whole number, got {df}")
    if x <= 0:
        return 1.0
    half = x / 2.0
    if df % 2 == 0:
        term = math.exp(-half)
        total = term
        for k in range(1, df // 2):
            term *= half / k
            total += term
        return min(1.0, total)
    root = math.sqrt(x)
    total = math.erfc(root / math.sqrt(2.0))  # 2·Q(√x)
    if df > 1:
        # Σ_{k=1}^{(df-1)/2} x^{k-1/2} e^{-x/2} / Γ(k+1/2)
        term = math.sqrt(2.0 * x / math.pi) * math.exp(-half)  # k = 1
        total += term
        for k in range(2, (df + 1) // 2):
            term *= x / (2 * k - 1)
            total += term
    return min(1.0, total)


def chi_square_gof(observed: Sequence[float], expected: Sequence[float]) -> tuple[float, int, float]:
    """Pearson's statistic, degrees of freedom and p-value of `observed` against `expected`.

    Categories expected to hold nothing are dropped (they carry no information, and a
    division by zero is not a test). With fewer than two categories left there is nothing
    to compare: statistic 0, df 0, p 1.
    """
    if len(observed) != len(expected):
        raise ValueError("observed and expected need the same length")
    pairs = [(o, e) for o, e in zip(observed, expected, strict=True) if e > 0]
    if len(pairs) < 2:
        return 0.0, 0, 1.0
    stat = sum((o - e) ** 2 / e for o, e in pairs)
    df = len(pairs) - 1
    return stat, df, chi2_sf(stat, df)


def benjamini_hochberg(pvalues: Sequence[float], q: float = 0.05) -> tuple[list[bool], list[float]]:
    """Which hypotheses BH rejects at false-discovery rate `q`, and the BH-adjusted p-values.

    Rank the m p-values; find the largest rank k with p_(k) <= k·q/m; reject ranks 1..k.
    The adjusted value of rank i is min over j >= i of p_(j)·m/j (capped at 1), so
    `adjusted[i] <= q` exactly when hypothesis i is rejected.
    """
    m = len(pvalues)
    if m == 0:
        return [], []
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = min(1.0, running)
    cutoff = 0
    for rank in range(1, m + 1):
        if pvalues[order[rank - 1]] <= rank * q / m:
            cutoff = rank
    rejected = [False] * m
    for rank in range(1, cutoff + 1):
        rejected[order[rank - 1]] = True
    return rejected, adjusted


def quantile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear-interpolation quantile (numpy's default) of already sorted values."""
    if not sorted_values:
        return 0.0
    pos = (len(sorted_values) - 1) * fraction
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal-approximation interval (fine for game lengths: n is large)."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = sum(values) / n
    if n == 1:
        return mean, mean, mean
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def histogram(values: Sequence[int], bins: int = 20) -> dict[str, list[float]]:
    """Equal-width bins over [min, max] of whole-number values (game lengths).

    Bin edges are whole numbers so two runs of the same sweep bin identically and a
    length never straddles an edge.
    """
    if not values:
        return {"edges": [], "counts": []}
    lo, hi = min(values), max(values)
    width = max(1, math.ceil((hi - lo + 1) / bins))
    nbins = max(1, math.ceil((hi - lo + 1) / width))
    counts = [0] * nbins
    for v in values:
        counts[(v - lo) // width] += 1
    edges = [lo + i * width for i in range(nbins + 1)]
    return {"edges": edges, "counts": counts}
