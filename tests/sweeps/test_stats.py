"""Statistics against published values, not against our own formulas run twice."""

from __future__ import annotations

import pytest

from workers.sweeps.stats import (
    benjamini_hochberg,
    chi2_sf,
    chi_square_gof,
    histogram,
    mean_interval,
    quantile,
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
