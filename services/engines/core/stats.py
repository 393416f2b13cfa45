"""The statistics every balance figure rests on, shared by the ladder and the sweeps.

It lives in the rules library's core because the ladder (core/ladder.py) needs it and the
rules library must not import the workers; the sweeps (workers/sweeps/) import it from
here, so the dependency arrow only runs downwards.

The tests and intervals come from maintained libraries (scipy.stats, statsmodels) rather
than hand-written formulas; tests/sweeps/test_stats.py checks them against published
values. Why these methods:

- **Wilson score intervals** for one rate: unlike `p ± z·sqrt(p(1-p)/n)` they stay inside
  [0, 1] and keep close to 95 % coverage at small n and near 0 or 1.
- **Pearson's chi-square goodness of fit** across seats (or teams, bots, cults): one test
  per question instead of one per seat, so per-seat intervals do not multiply alarms.
- **Benjamini-Hochberg** over every test of a report: with hundreds of tests, 5 % each
  would fire a handful by chance; BH keeps the expected share of false flags among the
  flagged at q and is far less conservative than Bonferroni.
- **Two-sample comparisons** (`Comparison`): on the same seeds, a rate is compared with
  McNemar's test on the discordant games and a paired (Wald, Agresti 2002 §10.1) interval,
  a mean with a paired t-test; on different seeds, rates with the score test and
  Newcombe's hybrid score interval, means with Welch's t-test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# scipy and statsmodels are imported inside the functions that use them: the ladder (and
# every engine process) imports this module, and loading numpy's thread pools into a
# process that later forks workers (the ladder's pool) is worth avoiding when unused.

# Two-sided 95 %: the standard normal quantile at 0.975.
Z95 = 1.959963984540054
# Below this many discordant games McNemar's test uses the exact binomial distribution.
MCNEMAR_EXACT_BELOW = 25


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"successes {successes} outside 0..{trials}")
    from scipy.stats import norm
    from statsmodels.stats.proportion import proportion_confint

    alpha = 2 * norm.sf(z)
    lo, hi = proportion_confint(successes, trials, alpha=alpha, method="wilson")
    # Clamp the rounding at the edges: 0/n must give exactly 0 as its lower bound.
    lo = 0.0 if successes == 0 else max(0.0, float(lo))
    hi = 1.0 if successes == trials else min(1.0, float(hi))
    return lo, hi


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with `df` degrees of freedom."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a positive whole number, got {df}")
    if x <= 0:
        return 1.0
    from scipy.stats import chi2

    return float(chi2.sf(x, df))


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

    `adjusted[i] <= q` exactly when hypothesis i is rejected, so "significant" and
    "adjusted p at most q" are one statement.
    """
    if not pvalues:
        return [], []
    from statsmodels.stats.multitest import multipletests

    rejected, adjusted, _s, _b = multipletests(list(pvalues), alpha=q, method="fdr_bh")
    return [bool(r) for r in rejected], [min(1.0, float(a)) for a in adjusted]


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
    half = z * sample_sd(values) / math.sqrt(n)
    return mean, mean - half, mean + half


def sample_sd(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1 in the denominator); 0 below two values."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def histogram(values: Sequence[int], bins: int = 20) -> dict[str, list[int]]:
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


# --- two samples ------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """B against A: both values, B minus A with its 95 % interval, and the test's p-value."""

    before: float
    after: float
    difference: float
    lo: float
    hi: float
    p: float
    test: str
    n: int  # games behind the comparison (pairs when paired, A's plus B's otherwise)


def paired_rates(a_only: int, b_only: int, both: int, neither: int, z: float = Z95) -> Comparison:
    """A rate on the same seeds under A and B (say last night and tonight).

    Only the discordant games (the event in A's game but not B's, or the reverse) carry
    information about the difference: McNemar's test (exact binomial below 25 discordant
    games, chi-square without continuity correction above), and the paired Wald interval
    of the difference, whose standard error uses the covariance the pairing removes.
    """
    n = a_only + b_only + both + neither
    if n <= 0 or min(a_only, b_only, both, neither) < 0:
        raise ValueError("a paired comparison needs non-negative counts and at least one pair")
    before = (a_only + both) / n
    after = (b_only + both) / n
    diff = (b_only - a_only) / n
    discordant = a_only + b_only
    if discordant == 0:
        return Comparison(before, after, 0.0, 0.0, 0.0, 1.0, "mcnemar", n)
    from statsmodels.stats.contingency_tables import mcnemar

    exact = discordant < MCNEMAR_EXACT_BELOW
    res = mcnemar([[both, a_only], [b_only, neither]], exact=exact, correction=False)
    se = math.sqrt(max(0.0, discordant - (b_only - a_only) ** 2 / n)) / n
    return Comparison(
        before,
        after,
        diff,
        diff - z * se,
        diff + z * se,
        min(1.0, float(res.pvalue)),
        "mcnemar-exact" if exact else "mcnemar",
        n,
    )


def paired_rates_from(a: Sequence[bool], b: Sequence[bool]) -> Comparison:
    """`paired_rates` from the two outcome lists, pair i being the same seed."""
    if len(a) != len(b):
        raise ValueError("paired outcomes need the same seeds on both sides")
    a_only = b_only = both = 0
    for x, y in zip(a, b, strict=True):
        both += x and y
        a_only += x and not y
        b_only += y and not x
    return paired_rates(a_only, b_only, both, len(a) - a_only - b_only - both)


def independent_rates(x_a: int, n_a: int, x_b: int, n_b: int) -> Comparison:
    """A rate from two independent samples: the score test and Newcombe's hybrid score interval."""
    if n_a <= 0 or n_b <= 0 or not 0 <= x_a <= n_a or not 0 <= x_b <= n_b:
        raise ValueError(f"rates need 0 <= successes <= trials > 0, got {x_a}/{n_a} and {x_b}/{n_b}")
    import numpy as np
    from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep

    before, after = x_a / n_a, x_b / n_b
    lo, hi = confint_proportions_2indep(x_b, n_b, x_a, n_a, method="newcomb", compare="diff")
    if x_a * n_b == x_b * n_a:
        p = 1.0  # equal rates: the statistic is 0 (statsmodels divides 0 by 0 at the edges)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):  # its odds ratio at a rate of 0 or 1
            res = test_proportions_2indep(x_b, n_b, x_a, n_a, method="score", compare="diff")
        p = float(res.pvalue)
    return Comparison(before, after, after - before, float(lo), float(hi), p, "score", n_a + n_b)


def paired_means(a: Sequence[float], b: Sequence[float]) -> Comparison:
    """A mean on the same seeds: the paired t-test on the per-seed differences and its interval."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError("a paired mean needs the same seeds on both sides, at least two")
    return paired_means_from_sums(
        len(a), sum(a), sum(b), sum((y - x) ** 2 for x, y in zip(a, b, strict=True))
    )


def paired_means_from_sums(n: int, sum_a: float, sum_b: float, sum_sq_diff: float) -> Comparison:
    """`paired_means` from sums alone: n pairs, each side's sum and the sum of squared
    differences (B minus A). Sums add up chunk by chunk, so a sweep's paired length
    comparison needs no list of games; with whole numbers (turns) the variance is exact."""
    if n < 2:
        raise ValueError("a paired mean needs at least two pairs")
    before, after = sum_a / n, sum_b / n
    sum_diff = sum_b - sum_a
    mean = sum_diff / n
    # n * sum(d^2) - (sum d)^2 = n (n - 1) var: exact in integers, no cancellation.
    spread = n * sum_sq_diff - sum_diff * sum_diff
    if spread <= 0:
        # No spread: a t-test is undefined; identical games mean no difference at all.
        return Comparison(before, after, mean, mean, mean, 1.0 if mean == 0 else 0.0, "paired-t", n)
    from scipy.stats import t

    se = math.sqrt(spread / (n * (n - 1)) / n)
    stat = mean / se
    half = float(t.ppf(0.975, n - 1)) * se
    p = min(1.0, 2 * float(t.sf(abs(stat), n - 1)))
    return Comparison(before, after, mean, mean - half, mean + half, p, "paired-t", n)


def independent_means(
    n_a: int, mean_a: float, sd_a: float, n_b: int, mean_b: float, sd_b: float
) -> Comparison:
    """A mean from two independent samples (given their sizes, means and SDs): Welch's t-test."""
    if n_a < 2 or n_b < 2:
        raise ValueError("a mean comparison needs at least two values on each side")
    diff = mean_b - mean_a
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        return Comparison(mean_a, mean_b, diff, diff, diff, 1.0 if diff == 0 else 0.0, "welch", n_a + n_b)
    from scipy.stats import t, ttest_ind_from_stats

    res = ttest_ind_from_stats(mean_b, sd_b, n_b, mean_a, sd_a, n_a, equal_var=False)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = float(t.ppf(0.975, df)) * se
    return Comparison(mean_a, mean_b, diff, diff - half, diff + half, float(res.pvalue), "welch", n_a + n_b)
