"""Statistical checks that every shuffle of every game deals fairly (docs/fairness.md).

A shuffle's test holds one position fixed (a fresh deal, or a deck in a known order just
before a search or a refill), replays it under `SEEDS` different generator states, and asks
of the order that comes out: is each position's card uniform over the cards that could be
there (Pearson's chi-square, one test per position), and are two decks of one deal
independent (a chi-square test of independence)? A shuffle line removed leaves the order
fixed, and every position's test fails by hundreds of standard deviations.

The false-failure bound is Bonferroni's over the whole run: every check a test may make is
named in `CHECKS`, and a check's tests share `RUN_ALPHA / len(CHECKS)` equally, so the
chance that any correct shuffle fails anywhere in a run is below `RUN_ALPHA` (< 1e-6),
whatever the dependence between the tests. A check not named here refuses to run, so no
test can quietly spend more than its share. The seeds are fixed, so a failure reproduces.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from scipy.stats import chi2, chi2_contingency

from services.engines.core.game import GameSpec, State
from services.engines.core.rng import Rng

SEEDS = 2000
RUN_ALPHA = 1e-7  # below the 1e-6 the issue asks for, with room for checks added later

# Every uniformity or independence check of the run, by name: the Bonferroni divisor.
CHECKS = (
    "core.draw_refill",
    "core.deal_rng_shuffle",
    "crazy_cultists.main_deck_setup",
    "crazy_cultists.dark_deck_setup",
    "crazy_cultists.decks_independent",
    "crazy_cultists.scry_reshuffle",
    "crazy_cultists.discard_refill",
    "crazy_cultists.dark_discard_refill",
    "trash_cult.chaos_deck_setup",
    "trash_cult.active_deck_setup",
    "trash_cult.decks_independent",
    "trash_cult.trash_refill",
    "trash_cult.empty_deck_refill",
    "trash_cult.squirrel_reshuffle",
    "tricky_cultists.cult_deck_deal",
    "tricky_cultists.agenda_deck_deal",
    "tricky_cultists.decks_independent",
    "tricky_cultists.later_round_deal",
    # Keyed shuffles (fairness.md, "Coupled deals"): the sweeps' deal.
    "core.keyed_shuffle",
    "core.coupled_deal",
    "core.deal_rng_keyed_shuffle",
    "trash_cult.keyed_chaos_deck_setup",
    "trash_cult.keyed_active_deck_setup",
    "trash_cult.keyed_decks_independent",
    "trash_cult.keyed_trash_refill",
    "crazy_cultists.keyed_main_deck_setup",
    "crazy_cultists.keyed_dark_deck_setup",
    "tricky_cultists.keyed_cult_deck_deal",
    "core.keyed_tie_break",  # the heuristic bots' tie-break in keyed games
)


def check_alpha(name: str, tests: int) -> float:
    """The significance level each of a check's `tests` tests runs at (Bonferroni)."""
    if name not in CHECKS:
        raise KeyError(f"{name!r} is not in CHECKS: add it, so the run's error bound counts it")
    return RUN_ALPHA / len(CHECKS) / tests


def assert_uniform_positions(name: str, orders: Sequence[Sequence[int]], pool: Sequence[int]) -> None:
    """Every position of the dealt `orders` (one per seed, all the same length) holds each
    card of `pool` equally often: one chi-square test per position, pool size - 1 degrees
    of freedom."""
    cards = sorted(pool)
    index = {c: i for i, c in enumerate(cards)}
    length = len(orders[0])
    assert all(len(o) == length for o in orders), "orders of different lengths"
    assert len(orders) >= SEEDS and length >= 1 and len(cards) >= 2
    expected = len(orders) / len(cards)
    assert expected >= 5, "too few seeds for this pool: the chi-square approximation needs 5 per cell"
    alpha = check_alpha(name, length)
    worst = (1.0, -1)
    for position in range(length):
        counts = [0] * len(cards)
        for order in orders:
            counts[index[order[position]]] += 1
        stat = sum((c - expected) ** 2 for c in counts) / expected
        p = float(chi2.sf(stat, len(cards) - 1))
        worst = min(worst, (p, position))
    assert worst[0] >= alpha, (
        f"{name}: position {worst[1]}'s card is not uniform over {len(cards)} cards "
        f"(p = {worst[0]:.3g}, below the bound {alpha:.3g})"
    )


def assert_uniform_cells(name: str, cells: Sequence[Sequence[int]], probabilities: Sequence[float]) -> None:
    """Each row of `cells` (per item, per seed: the cell it landed in, 0..k-1) falls in
    cell i with `probabilities[i]`: one chi-square test per item. For deals whose zones are
    sorted (a hand), where the zone a card lands in is what the shuffle decides."""
    alpha = check_alpha(name, len(cells))
    worst = (1.0, -1)
    for item, landed in enumerate(cells):
        assert len(landed) >= SEEDS
        counts = [0] * len(probabilities)
        for cell in landed:
            counts[cell] += 1
        expected = [len(landed) * q for q in probabilities]
        assert min(expected) >= 5
        stat = sum((c - e) ** 2 / e for c, e in zip(counts, expected, strict=True))
        p = float(chi2.sf(stat, len(probabilities) - 1))
        worst = min(worst, (p, item))
    assert worst[0] >= alpha, (
        f"{name}: item {worst[1]} does not land in each place with the right odds "
        f"(p = {worst[0]:.3g}, below the bound {alpha:.3g})"
    )


def assert_independent(name: str, pairs: Sequence[tuple[int, int]], bins: int = 4) -> None:
    """The two values of each pair (e.g. the top card of two decks of one deal, each
    already cut into `bins` classes) are independent: one chi-square test of a
    bins x bins table."""
    assert len(pairs) >= SEEDS
    table = [[0] * bins for _ in range(bins)]
    for a, b in pairs:
        table[a][b] += 1
    p = float(chi2_contingency(table, correction=False).pvalue)
    alpha = check_alpha(name, 1)
    assert p >= alpha, f"{name}: the two decks are not independent (p = {p:.3g}, below {alpha:.3g})"


def cut(card: int, lo: int, hi: int, bins: int = 4) -> int:
    """Which of `bins` equal classes of ids lo..hi-1 `card` is in."""
    return (card - lo) * bins // (hi - lo)


def dealt(
    spec: GameSpec, players: int, config: dict[str, Any] | None = None, shuffle: str | None = None
) -> list[State]:
    """Fresh deals of `SEEDS` seeds: the setup shuffles alone, no game played."""
    return [spec.new_state(config, players, seed, None, shuffle) for seed in range(SEEDS)]


def reshuffled(state: State, seat: int, action: int) -> list[State]:
    """`state` after `seat` plays `action`, under `SEEDS` different generator states: the
    zones before the move are the same every time, so any variety after it is the
    move's own shuffle."""
    out = []
    for i in range(SEEDS):
        trial = state.clone()
        trial.rng = Rng(0xFA1E + i)
        trial.apply(seat, action)
        out.append(trial)
    return out


def find_position(
    spec: GameSpec,
    players: int,
    config: dict[str, Any] | None,
    wanted: Callable[[State], tuple[int, int] | None],
    games: int = 300,
) -> tuple[State, int, int]:
    """The first position of a seeded random game where `wanted` names a (seat, action) to
    test, with that seat and action: a real position of the game, found by playing it."""
    for game in range(games):
        state = spec.new_state(config, players, game)
        pick = random.Random(game)
        while not state.is_terminal():
            hit = wanted(state)
            if hit is not None:
                return state, hit[0], hit[1]
            seat = state.to_act()[0]
            state.apply(seat, pick.choice(state.legal_actions(seat)))
    raise AssertionError("no position of the wanted kind in the random games tried")


def restored(spec: GameSpec, doc: dict[str, Any]) -> State:
    """A position rebuilt through the validating `from_json` (a lost card fails loudly)."""
    return spec.state_class.from_json(doc)
