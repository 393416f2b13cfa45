"""A heuristic Tricky Cultists bot that plays like a decent Spades partner.

It reads only what `state.view(seat)` shows: its own hand, Codex, agenda and (while
drafting) pack, plus public facts (the trick, trump, bonus suit, revealed agendas, won
stacks and played cards, Suspicion, scores). It never looks at another hand, another
Codex, an unrevealed agenda or the undealt cards, so resampling those leaves its choice
unchanged (tests check this).

Its habits: draft the agenda worth the most VP for its hand, with every VP, Suspicion
cost and target read from the config (declining too, at `decline_suspicion` x
`suspicion_penalty`), so a sweep over any such field changes its play (docs/bots.md); win
tricks with the cheapest card that wins (low cards are also worth the most, TK-1); follow
low when it cannot win or its partner already wins; duck when its agenda wants no more tricks; set trump to its longest
suit; aim Purple's Suspicion where it hurts the opponents most once the discard rule
(TK-10) is applied, the leading opponent first.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .cards import (
    BONUS_SUIT,
    EXACTLY_THREE,
    LAST_TRICK,
    LEAD_FIRST,
    MOST_ABILITIES,
    MOST_TRICKS,
    NO_TRICKS,
    agenda_kind,
)
from .config import TrickyCultistsConfig
from .rules import (
    BLUE,
    CHOOSE_BONUS,
    DRAFT,
    GREEN,
    KEEP,
    OVER,
    PASS,
    PLAYING,
    PURPLE,
    RED,
    STRIDE,
    TrickyCultistsState,
)

# How likely a card of rank `ranks - i` is to take a trick, for the draft's estimate.
WIN_CHANCE = (0.9, 0.65, 0.45, 0.25)
LOW_CHANCE = 0.05
# Draft: leading the first trick is worth a little on its own; a chosen Round Bonus suit
# brings about this many bonus-suit tricks; a Win No Tricks steal takes about this share
# of the best trick value.
LEAD_TEMPO = 0.2
BONUS_TRICKS = 0.3
STEAL_SHARE = 0.5


class HeuristicBot:
    name = "heuristic"
    PARAMS: dict[str, type] = {}

    def __init__(self, spec: Any = None, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        phase = state.phase
        if phase == PLAYING:
            return self._play(state, seat, legal)
        if phase == DRAFT:
            return self._draft(state, seat, legal)
        if phase in (CHOOSE_BONUS, RED):
            return legal[0] // STRIDE * STRIDE + self._best_suit(state, seat)
        if phase == GREEN:
            return self._green(state, seat, legal)
        if phase == BLUE:
            return self._blue(state, seat, legal)
        if phase == PURPLE:
            return self._purple(state, seat, legal)
        return self._steal(state, legal)

    # --- drafting -----------------------------------------------------------------------
    def _draft(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        """Keep the agenda worth the most VP for this hand, or decline if all cost more.

        Every agenda is valued from the config as the draft finds it (`agenda_value`), and
        declining at its Suspicion cost, so a sweep over any VP, cost or target field
        changes what this bot drafts.
        """
        cfg = state.config
        ranks = cfg.ranks
        expected = sum(_win_chance(c % ranks + 1, ranks) for c in state.hands[seat])
        fewest = (
            min(state.suspicion) == state.suspicion[seat]
            and state.suspicion.count(state.suspicion[seat]) == 1
        )
        decline = -cfg.decline_suspicion * cfg.suspicion_penalty

        def score(action: int) -> float:
            kind, arg = divmod(action, STRIDE)
            base = agenda_value(cfg, arg, expected, fewest) if kind == KEEP else decline
            return base + self.rng.random() * 0.01

        return max(legal, key=score)

    # --- trick play ---------------------------------------------------------------------
    def _play(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        cfg, n = state.config, state.num_players
        ranks, trump = cfg.ranks, state.trump
        trick = state.trick
        want = self._wants_tricks(state, seat)

        def beats(card: int, top: int) -> bool:
            if card // ranks == top // ranks:
                return card > top
            return trump >= 0 and card // ranks == trump

        def cheapest(cards: list[int]) -> int:
            """Lowest rank; among equals, a non-trump card keeps the trumps."""
            return min(cards, key=lambda c: (c % ranks, c // ranks == trump, self.rng.random()))

        if not trick:
            if not want:
                return cheapest(legal)
            sure = [c for c in legal if self._is_master(state, seat, c)]
            return cheapest(sure) if sure else cheapest(legal)
        top, top_seat = trick[0], state.leader
        for i, card in enumerate(trick[1:], 1):
            if beats(card, top):
                top, top_seat = card, (state.leader + i) % n
        winning = [c for c in legal if beats(c, top)]
        losing = [c for c in legal if not beats(c, top)]
        last = len(trick) == n - 1
        partner_wins = top_seat % 2 == seat % 2
        if not want:
            return max(losing, key=lambda c: (c % ranks, self.rng.random())) if losing else cheapest(legal)
        if partner_wins and (last or self._is_master(state, seat, top)) and losing:
            return cheapest(losing)
        if winning and (last or any(self._is_master(state, seat, c) for c in winning)):
            safe = winning if last else [c for c in winning if self._is_master(state, seat, c)]
            return cheapest(safe)
        if winning and not partner_wins:
            return cheapest(winning)
        return cheapest(losing or legal)

    def _wants_tricks(self, state: TrickyCultistsState, seat: int) -> bool:
        """Win No Tricks ducks until it fails; Win Exactly Three stops at three."""
        n = state.num_players
        mine = len(state.won[seat]) // n
        agenda = state.agendas[seat]
        if agenda >= 0:
            kind = agenda_kind(agenda)
            if kind == NO_TRICKS and mine == 0:
                return False
            if kind == EXACTLY_THREE and mine >= state.config.exactly_three_target:
                return False
        return True

    def _is_master(self, state: TrickyCultistsState, seat: int, card: int) -> bool:
        """No card of its suit that this seat has not seen is higher."""
        ranks = state.config.ranks
        suit = card // ranks
        seen = set(state.hands[seat])
        seen.update(state.trick)
        for pile in state.won:
            seen.update(pile)
        return all(c in seen for c in range(card + 1, (suit + 1) * ranks))

    # --- abilities and the steal --------------------------------------------------------
    def _best_suit(self, state: TrickyCultistsState, seat: int) -> int:
        """The suit this seat holds most of, high cards breaking ties (Red trump, bonus)."""
        ranks = state.config.ranks
        hand = state.hands[seat]

        def strength(suit: int) -> tuple[int, int, float]:
            cards = [c % ranks for c in hand if c // ranks == suit]
            return (len(cards), sum(cards), self.rng.random())

        return max(range(len(state.config.suits)), key=strength)

    def _card_worth(self, state: TrickyCultistsState, seat: int, card: int) -> int:
        ranks = state.config.ranks
        worth = card % ranks + (ranks if card // ranks == state.trump else 0)
        return -worth if not self._wants_tricks(state, seat) else worth

    def _green(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        takes = [a for a in legal if a // STRIDE != PASS]
        return max(takes, key=lambda a: (self._card_worth(state, seat, a % STRIDE), self.rng.random()))

    def _blue(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        cards = state.config.cards

        def gain(action: int) -> tuple[int, float]:
            if action // STRIDE == PASS:
                return (0, self.rng.random())
            give, take = divmod(action % STRIDE, cards)
            return (
                self._card_worth(state, seat, take) - self._card_worth(state, seat, give),
                self.rng.random(),
            )

        return max(legal, key=gain)

    def _purple(self, state: TrickyCultistsState, seat: int, legal: list[int]) -> int:
        """Minimise own team's Suspicion penalty minus the opponents' after the discard."""
        totals = state.totals()

        def outcome(action: int) -> tuple[int, int, float]:
            target = action % STRIDE
            held = list(state.suspicion)
            held[target] += state.config.purple_suspicion
            most = max(held)
            if held.count(most) == 1:
                held[held.index(most)] = 0
            mine = sum(h for s, h in enumerate(held) if s % 2 == seat % 2)
            theirs = sum(h for s, h in enumerate(held) if s % 2 != seat % 2)
            lead = totals[target] if target % 2 != seat % 2 else -(1 << 20)
            return (theirs - mine, lead, self.rng.random())

        return max(legal, key=outcome)

    def _steal(self, state: TrickyCultistsState, legal: list[int]) -> int:
        cfg = state.config

        def worth(action: int) -> tuple[int, float]:
            if action // STRIDE == PASS:
                return (0, self.rng.random())
            top = action % STRIDE
            bonus = cfg.bonus_per_trick if top // cfg.ranks == state.bonus else 0
            return (cfg.card_values[top] + bonus + 1, self.rng.random())

        return max(legal, key=worth)


def agenda_success_chance(cfg: TrickyCultistsConfig, kind: int, expected: float, fewest: bool) -> float:
    """How often this bot meets an agenda kind with a hand expected to take `expected`
    tricks (`fewest`: it holds strictly the fewest Suspicion now). Rough self-play rates."""
    if kind == LEAD_FIRST:
        return 1.0  # always met (TK-3)
    if kind == BONUS_SUIT:
        return 0.85  # it picks its own longest suit
    if kind == MOST_TRICKS:
        return 0.95 if expected >= 3.6 else (0.5 if expected >= 3.0 else 0.0)
    if kind == NO_TRICKS:
        return 0.8 if expected <= 0.7 else (0.35 if expected <= 1.0 else 0.05)
    if kind == LAST_TRICK:
        return 0.2
    if kind == EXACTLY_THREE:
        target = cfg.exactly_three_target
        return 0.6 if target - 0.6 <= expected <= target + 0.4 else 0.1
    if kind == MOST_ABILITIES:
        return 0.17
    return 2 / 3 if fewest else 0.2  # CLEAN_HANDS


def agenda_value(cfg: TrickyCultistsConfig, kind: int, expected: float, fewest: bool) -> float:
    """Expected VP of keeping an agenda of `kind`: its success and failure VP weighed by the
    chance of meeting it, plus what else it brings or costs by the config's numbers:
    Lead First Trick's Suspicion, the Round Bonus points a chosen suit adds, the trick a
    Win No Tricks success steals."""
    success, failure = cfg.agenda_points[kind]
    p = agenda_success_chance(cfg, kind, expected, fewest)
    value = p * success + (1.0 - p) * failure
    if kind == LEAD_FIRST:
        value += LEAD_TEMPO - cfg.lead_first_suspicion * cfg.suspicion_penalty
    elif kind == BONUS_SUIT:
        value += BONUS_TRICKS * cfg.bonus_per_trick
    elif kind == NO_TRICKS:
        value += p * STEAL_SHARE * max(cfg.card_values)
    return value


def _win_chance(rank: int, ranks: int) -> float:
    below_top = ranks - rank
    return WIN_CHANCE[below_top] if below_top < len(WIN_CHANCE) else LOW_CHANCE


# The spread of one round's team score difference between two decent teams (heuristic
# self-play: standard deviation 8.8 VP per round), used to turn a lead into a win chance.
ROUND_SPREAD = 8.8


def evaluate(state: TrickyCultistsState) -> list[float]:
    """Estimated returns for search bots that stop rollouts early (GameSpec.evaluate).

    The team lead so far (TK-11 is decided on team totals) counts every scored round, plus
    the round in play as it stands: trick values and Round Bonus of the tricks already won,
    agendas already settled (Lead First Trick, a failed Win No Tricks or Win Exactly Three)
    and the Suspicion penalty after the TK-10 discard. The lead becomes a win chance with a
    normal spread that shrinks with the play left (rounds and cards in hand), so a lead late
    in the last round is nearly a win and the same lead in round one is only a tilt.
    Public facts only (won tricks, revealed agendas, Suspicion), so it reads the same on
    any determinisation of a position.
    """
    if state.phase == OVER:
        return state.returns()
    cfg, n = state.config, state.num_players
    lead = state.team_totals()
    diff = float(lead[0] - lead[1])
    if len(state.breakdown) == state.round:  # the round in play is not scored yet
        diff += _round_so_far(state)
    left_in_round = sum(len(h) for h in state.hands) / (n * cfg.hand_size) if state.phase != DRAFT else 1.0
    rounds_left = cfg.rounds - state.round - 1 + min(1.0, left_in_round)
    spread = ROUND_SPREAD * math.sqrt(max(rounds_left, 0.0)) + 1.0
    p0 = 0.5 * (1.0 + math.erf(diff / (spread * math.sqrt(2.0))))
    return [p0 if s % 2 == 0 else 1.0 - p0 for s in range(n)]


def _round_so_far(state: TrickyCultistsState) -> float:
    """Team 0 minus team 1 for the round in play, counting only what is already settled."""
    cfg, n = state.config, state.num_players
    values, ranks = cfg.card_values, cfg.ranks
    diff = 0.0
    sign = (1.0, -1.0, 1.0, -1.0)
    for s in range(n):
        tops = state.won[s][::n]
        part = sum(values[t] for t in tops)
        if state.bonus >= 0:
            part += cfg.bonus_per_trick * sum(1 for t in tops if t // ranks == state.bonus)
        if state.phase != DRAFT and state.agendas[s] >= 0:
            kind = agenda_kind(state.agendas[s])
            tricks = len(state.won[s]) // n
            if kind == LEAD_FIRST:
                part += cfg.agenda_points[kind][0]
            elif (kind == NO_TRICKS and tricks > 0) or (
                kind == EXACTLY_THREE and tricks > cfg.exactly_three_target
            ):
                part += cfg.agenda_points[kind][1]
        diff += sign[s % 4] * part
    held = list(state.suspicion)
    most = max(held)
    if held.count(most) == 1:
        held[held.index(most)] = 0
    diff -= cfg.suspicion_penalty * sum(sign[s % 4] * held[s] for s in range(n))
    return diff
