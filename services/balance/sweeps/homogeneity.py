"""Do some labels (cults, teams) win more than others? A homogeneity test stratified by game.

The older test compared each label's wins with its share of appearances, a goodness-of-fit
chi-square over wins alone. It left out the losses, which at 2 players (a fair share near
1/2) halves the statistic: under the null it rejected 0.6 % of cells at the nominal 5 %. A
plain 2 x K homogeneity table (won / not won per label) puts the losses back but treats
every appearance as independent, where two cults at one table are not: when one wins the
other loses, and a cult never meets itself at a 2-player table. It rejects too often.

So each game is its own stratum (a generalised Cochran-Mantel-Haenszel test). Under the
null, "the label does not matter", the W winners of a game of n seats are any W of its n
seats alike, so the wins of label L in that game have the hypergeometric mean W c_L / n
(c_L: its seats) and the hypergeometric covariances. Summed over games, the wins' excess
x = wins - mean has covariance V, and x' V^- x is chi-square with rank(V) degrees of
freedom (K - 1 when every label meets every other). Seats may still differ (the first
seat's advantage): the seats' labels are dealt at random, so a seat effect only lowers
the true variance, and the test stays at or below its size.

Games are counted by stratum shape: (labels by seat, number of winners) -> games. Those
counts merge like every other count of a partial (partial.py), and the test is computed
once from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from services.engines.core.stats import chi2_sf

SEP = "\t"  # between the labels of a stratum key; labels never hold a tab


def stratum_key(labels: Sequence[str], winners: int) -> str:
    """The key a game is counted under: its seats' labels in seat order, then its winners."""
    return SEP.join([*labels, str(winners)])


def homogeneity_test(strata: Mapping[str, int], wins: Mapping[str, int]) -> dict[str, float | int | str]:
    """The stratified test over `strata` (stratum key -> games) and each label's `wins`."""
    labels = sorted({lab for key in strata for lab in key.split(SEP)[:-1]})
    if len(labels) < 2:
        return {"chi2": 0.0, "df": 0, "p": 1.0, "method": "stratified homogeneity"}
    at = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    mean = np.zeros(k)
    cov = np.zeros((k, k))
    for key, games in strata.items():
        *seat_labels, winners_text = key.split(SEP)
        n, w = len(seat_labels), int(winners_text)
        c = np.zeros(k)
        for lab in seat_labels:
            c[at[lab]] += 1
        mean += games * w * c / n
        if n > 1 and 0 < w < n:
            share = c / n
            cov += games * w * (n - w) / (n - 1) * (np.diag(share) - np.outer(share, share))
    x = np.array([wins.get(lab, 0) for lab in labels], dtype=float) - mean
    scale = max(float(np.max(np.abs(np.diag(cov)))), 1e-300)
    eig, vec = np.linalg.eigh(cov / scale)
    keep = eig > 1e-9
    df = int(keep.sum())
    if df == 0:
        return {"chi2": 0.0, "df": 0, "p": 1.0, "method": "stratified homogeneity"}
    proj = vec[:, keep].T @ x
    stat = float(np.sum(proj * proj / (eig[keep] * scale)))
    return {"chi2": stat, "df": df, "p": chi2_sf(stat, df), "method": "stratified homogeneity"}
