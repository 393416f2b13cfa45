"""Statistics against published values, not against our own formulas run twice."""

from __future__ import annotations

import pytest
from scipy.stats import chi2

from services.engines.core.stats import (
    benjamini_hochberg,
    chi2_sf,
    chi_square_gof,
    histogram,
    independent_means,
    independent_rates,
    mean_interval,
    paired_means,
    paired_rates,
    paired_rates_from,
    quantile,
    sample_sd,
    wilson,
)


@pytest.mark.parametrize(
    ("wins", "games", "lo", "hi"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score interval).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # The textbook 5 of 10.
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_matches_newcombe(wins, games, lo, hi):
    got = wilson(wins, games)
    assert got == pytest.approx((lo, hi), abs=6e-5)


def test_wilson_edges():
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(11, 10)


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [  # critical values from any chi-square table
        (3.841459, 1, 0.05),
        (5.991465, 2, 0.05),
        (7.814728, 3, 0.05),
        (9.487729, 4, 0.05),
        (11.070498, 5, 0.05),
        (6.634897, 1, 0.01),
        (11.344867, 3, 0.01),
        (15.086272, 5, 0.01),
        (0.0, 3, 1.0),
    ],
)
def test_chi2_tail_matches_tables(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, abs=1e-6)


def test_chi_square_across_seats():
    # 100 wins over 4 seats, fair share 25 each: (25 + 25 + 0 + 0) / 25 = 2.0 on 3 df.
    stat, df, p = chi_square_gof([30, 20, 25, 25], [25, 25, 25, 25])
    assert (stat, df) == (2.0, 3)
    assert p == pytest.approx(0.5724067, abs=1e-6)
    # A seat winning half of 400 four-player games is far from fair.
    stat, df, p = chi_square_gof([200, 70, 70, 60], [100, 100, 100, 100])
    assert stat == pytest.approx(134.0) and p < 1e-20  # (100² + 30² + 30² + 40²) / 100
    # Nothing to compare with a single category.
    assert chi_square_gof([5, 0], [5, 0]) == (0.0, 0, 1.0)


def test_benjamini_hochberg_paper_example():
    # Benjamini & Hochberg (1995), JRSS B 57:289, section 4: 15 p-values, q = 0.05;
    # the procedure rejects the four smallest (Bonferroni only three).
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
         0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000]  # fmt: skip
    rejected, adjusted = benjamini_hochberg(p, 0.05)
    assert rejected == [True] * 4 + [False] * 11
    assert adjusted[3] == pytest.approx(0.0095 * 15 / 4)
    assert adjusted[4] == pytest.approx(0.0201 * 15 / 5)
    assert adjusted[0] == pytest.approx(0.0001 * 15)
    assert all(a <= q for a, q in zip(adjusted[:4], [0.05] * 4, strict=True))
    assert adjusted[-1] == 1.0


def test_benjamini_hochberg_order_does_not_matter():
    p = [0.04, 0.001, 0.9, 0.03, 0.02]
    rejected, _adjusted = benjamini_hochberg(p, 0.05)
    # sorted: .001 <= .01, .02 <= .02, .03 <= .03, .04 <= .04, .9 > .05: four rejected
    assert rejected == [True, True, False, True, True]
    back = benjamini_hochberg(list(reversed(p)), 0.05)
    assert back[0] == list(reversed(rejected))
    assert benjamini_hochberg([], 0.05) == ([], [])


def test_quantiles_histogram_mean():
    values = sorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert quantile(values, 0.5) == 5.5
    assert quantile(values, 0.1) == pytest.approx(1.9)
    hist = histogram([10, 11, 12, 30], bins=4)
    assert sum(hist["counts"]) == 4 and hist["edges"][0] == 10
    assert all(float(e).is_integer() for e in hist["edges"])
    mean, lo, hi = mean_interval([2, 4, 4, 4, 5, 5, 7, 9])
    assert mean == 5.0 and lo < 5.0 < hi


def test_mcnemar_and_paired_interval_match_agresti():
    # Agresti (2002), Categorical Data Analysis, Table 10.1: presidential approval in two
    # surveys of the same 1,600 people: 794 approve both times, 150 approve then not,
    # 86 not then approve, 570 neither. McNemar z² = 17.36; the difference 0.59 - 0.55
    # has the paired 95 % interval 0.04 ± 0.019.
    c = paired_rates(a_only=150, b_only=86, both=794, neither=570)
    assert (c.before, c.after) == pytest.approx((0.59, 0.55))
    assert c.difference == pytest.approx(-0.04)
    assert (c.lo, c.hi) == pytest.approx((-0.059, -0.021), abs=6e-4)
    assert c.p == pytest.approx(chi2.sf(17.356, 1), rel=1e-3) and c.test == "mcnemar"
    # Few discordant games: the exact binomial test (2 of 12 one way: p = 0.0386).
    small = paired_rates(a_only=10, b_only=2, both=30, neither=58)
    assert small.test == "mcnemar-exact" and small.p == pytest.approx(0.03857, abs=1e-4)
    # Identical outcomes: nothing to tell apart.
    same = paired_rates_from([True, False, True], [True, False, True])
    assert (same.difference, same.lo, same.hi, same.p) == (0.0, 0.0, 0.0, 1.0)


def test_independent_rates_match_newcombe():
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 against 48/80,
    # method 10 (hybrid score) interval 0.0524 to 0.3339 for the difference 0.2.
    c = independent_rates(48, 80, 56, 70)
    assert c.difference == pytest.approx(0.2)
    assert (c.lo, c.hi) == pytest.approx((0.0524, 0.3339), abs=6e-5)
    assert 0.001 < c.p < 0.05
    assert independent_rates(10, 50, 20, 100).p == 1.0


def test_mean_comparisons():
    # Student's sleep data (Student 1908; R's `sleep`): extra hours under two drugs on the
    # same 10 patients; the paired t-test gives t = -4.06, p = 0.00283, interval -2.46 to -0.70.
    drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    paired = paired_means(drug2, drug1)
    assert paired.p == pytest.approx(0.002833, abs=2e-6)
    assert (paired.lo, paired.hi) == pytest.approx((-2.4598858, -0.7001142), abs=1e-6)
    # The same data as two independent groups (R: t.test(extra ~ group, sleep)): Welch
    # t = -1.8608, df = 17.776, p = 0.07939, interval -3.3654832 to 0.2054832.
    sd = sample_sd
    welch = independent_means(10, sum(drug2) / 10, sd(drug2), 10, sum(drug1) / 10, sd(drug1))
    assert welch.p == pytest.approx(0.07939, abs=1e-5)
    assert (welch.lo, welch.hi) == pytest.approx((-3.3654832, 0.2054832), abs=1e-6)
    assert paired_means([3, 4], [3, 4]).p == 1.0
