"""The smallest effect a report could have found: minimum detectable effects (MDE).

A report that flags nothing says little unless it also says what it could have seen. For
every compared metric this module gives the smallest true change that its test would
detect with 80 % power at the report's size, after Benjamini-Hochberg.

After BH: a lone real effect among m tests is rejected when its p is at most q / m (BH's
first step, the hardest one), so the MDE is computed at the two-sided level q / m. With
several real effects BH rejects at larger p, so this is the conservative figure: an effect
of this size is found at least 80 % of the time whatever the other tests do.

Normal approximations, per kind of test:

- paired rates (McNemar, same seeds): the difference of two shares over n games has
  variance about d / n, d the share of discordant games; a change creates at least as
  many discordant games as its size, so MDE = z * sqrt(max(d, MDE) / n), which is
  z * sqrt(d / n) when d >= z^2 / n and z^2 / n below (z = z_{1-a/2} + z_{0.8});
- independent rates (different seeds): z * sqrt(p (1 - p) (1/n_a + 1/n_b)), p the base rate;
- one rate against a fair share f over n trials (a seat, a cult against its fair share):
  z * sqrt(f (1 - f) / n);
- means (game length in turns): z * sd / sqrt(n) for paired differences (sd of the per-game
  differences), z * sqrt(sd_a^2 / n_a + sd_b^2 / n_b) for independent samples.

Where a practical minimum applies (the nightly's 2 points, 1 turn), the reported MDE is
the larger of the two: a drift must pass both.
"""

from __future__ import annotations

import math
from statistics import NormalDist

POWER = 0.8
_NORMAL = NormalDist()


def bh_level(q: float, family_size: int) -> float:
    """The two-sided level a lone effect must reach in a BH family of `family_size`."""
    return q / max(1, family_size)


def z_total(alpha: float, power: float = POWER) -> float:
    """z_{1-alpha/2} + z_{power}: the distance, in standard errors, an effect must lie at."""
    return _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)


def mde_paired_rate(n: int, discordant: float, alpha: float, power: float = POWER) -> float:
    """Paired shares over `n` games with a `discordant` share of games that differ."""
    if n <= 0:
        return math.inf
    z = z_total(alpha, power)
    floor = z * z / n
    return min(1.0, z * math.sqrt(discordant / n) if discordant >= floor else floor)


def mde_independent_rate(n_a: int, n_b: int, rate: float, alpha: float, power: float = POWER) -> float:
    """Two independent shares around `rate`, over `n_a` and `n_b` trials."""
    if n_a <= 0 or n_b <= 0:
        return math.inf
    p = min(max(rate, 1.0 / (n_a + n_b)), 1 - 1.0 / (n_a + n_b))
    return min(1.0, z_total(alpha, power) * math.sqrt(p * (1 - p) * (1 / n_a + 1 / n_b)))


def mde_one_rate(n: int, fair: float, alpha: float, power: float = POWER) -> float:
    """One share over `n` trials against a known `fair` share."""
    if n <= 0 or not 0 < fair < 1:
        return math.inf
    return min(1.0, z_total(alpha, power) * math.sqrt(fair * (1 - fair) / n))


def mde_paired_mean(n: int, sd_difference: float, alpha: float, power: float = POWER) -> float:
    if n <= 1:
        return math.inf
    return z_total(alpha, power) * sd_difference / math.sqrt(n)


def mde_independent_mean(
    n_a: int, sd_a: float, n_b: int, sd_b: float, alpha: float, power: float = POWER
) -> float:
    if n_a <= 1 or n_b <= 1:
        return math.inf
    return z_total(alpha, power) * math.sqrt(sd_a * sd_a / n_a + sd_b * sd_b / n_b)


def rounded(x: float, digits: int = 6) -> float | None:
    """A JSON-safe MDE: None where nothing could be detected (no games)."""
    return None if math.isinf(x) or math.isnan(x) else round(x, digits)
