"""The `heuristic` bot: greedy scoring of each legal action from what its seat may see.

It reads only `state.view(seat)` (its own hand and the public table, G-3) and the config
(public: every seat plays by the same rules), never other hands or the deck, so it plays
fair in live matches too. Every config number that changes what a play is worth reaches
the scores: the candle threshold and candles to win through the view's `need` and
`candles_to_win` (CC-4, CC-9), the Black Spire's `black_spire_points` directly (CC-10);
docs/bots.md lists the fields that cannot change a choice and why. The plan, in order of weight:
light a candle when a favor card can (exactly, in fiendish mode, never going over); else
hit whoever is closest to winning where it hurts most; else push its own stack up with the
biggest favor card. Counter-Spells are never thrown away and are spent only on a big blow
against itself (or to rescue its own card). Ties go to the bot's own seeded generator.
"""

from __future__ import annotations

import random
from typing import Any, cast

from services.engines.core.game import GameSpec, State
from services.engines.core.rng import tie_key

from .cards import (
    BEELZE_BEATDOWN,
    BLACK_SPIRE,
    COUNTER_SPELL,
    DARK_BAPTISM,
    DARK_FAVOR_4,
    DARK_KINDS,
    EVIL_EYE,
    FALL_FROM_GRACE,
    FEAR_THE_REAPER,
    FORBIDDEN_ALCHEMY,
    HAIL_YOURSELF,
    HEAVY_METAL,
    HEX_O_RAMA,
    INFERNAL_INFERNO,
    KIND_OF_NAME,
    LIFE_SIPHON,
    NECROMANCY,
    NERDRONOMICON,
    OUIJA,
    POLYMORPHIZATION,
    PUPPET_MASTER,
    SCRYING_BONES,
    STRIP,
    SWITCHEROO,
    TOILING_TROUBLE,
    VALUE,
    VOODOO,
)
from .rules import (
    DISCARD_HAND,
    DONE,
    LEAVE_HAND,
    PASS,
    SWAP_HANDS,
    TAKE_DARK,
    TAKE_NOTHING,
    CrazyCultistsState,
    decode,
)

CANDLE = 100.0  # lighting a candle outweighs anything else a turn can do
# How much a card is worth holding, for keeping, taking and discarding.
KEEP = {
    COUNTER_SPELL: 9.0,
    BEELZE_BEATDOWN: 7.0,
    HEX_O_RAMA: 6.0,
    INFERNAL_INFERNO: 5.0,
    SWITCHEROO: 4.0,
    POLYMORPHIZATION: 4.0,
    FALL_FROM_GRACE: 4.0,
    EVIL_EYE: 4.0,
    NERDRONOMICON: 4.0,
    TOILING_TROUBLE: 3.0,
}
# A flat worth for effects that do not strip favor points, when played.
EFFECT = {
    POLYMORPHIZATION: 3.0,
    EVIL_EYE: 3.0,
    BLACK_SPIRE: 5.0,
    OUIJA: 3.0,
    NERDRONOMICON: 6.0,
    NECROMANCY: 5.0,
    SCRYING_BONES: 7.0,
    FORBIDDEN_ALCHEMY: 5.0,
    DARK_BAPTISM: 12.0,
    PUPPET_MASTER: 3.0,
    HAIL_YOURSELF: 6.0,
}
COUNTER_AT = 5.0  # spend a Counter-Spell only on a blow at least this big


class HeuristicBot:
    name = "heuristic"
    PARAMS: dict[str, type] = {}

    def __init__(self, spec: GameSpec, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        table = Table(state.view(seat), state.config)
        if state.shuffle:  # a keyed game: couple the tie-breaks too (rng.tie_key)
            salt = self.rng.getrandbits(64)
            return max(legal, key=lambda a: (table.score(a), tie_key(salt, a)))
        return max(legal, key=lambda a: (table.score(a), self.rng.random()))


class Table:
    """One seat's view, with the few judgements the bot makes from it."""

    def __init__(self, view: dict[str, Any], config: Any) -> None:
        self.view = view
        self.config = config
        self.me = view["seat"]
        self.players = view["players"]
        self.hand = [KIND_OF_NAME[name] for name in view["hand"]]
        self.pending = view["pending"]
        self.fiendish = view["variant"] == "fiendish"

    # --- reading the table ---------------------------------------------------------------
    def stack(self, seat: int) -> list[int]:
        return [VALUE[KIND_OF_NAME[name]] for name in self.players[seat]["stack"]]

    def threat(self, seat: int) -> float:
        """How close a seat is to winning: its candles, then how full its stack is."""
        p = self.players[seat]
        return p["candles"] / self.view["candles_to_win"] + p["stack_total"] / (2 * p["need"])

    def lights(self, seat: int, total: int) -> float:
        """+1 if a stack total lights a candle for `seat`, -1 if it overshoots (fiendish), else 0."""
        need = self.players[seat]["need"]
        if total < need:
            return 0.0
        return -1.0 if self.fiendish and total > need else 1.0

    def topple(self, value: int) -> float:
        """Worth of a favor card played onto our own Black Spire (CC-10): the Spire falls at
        `black_spire_points`, so the card that brings it down with the least to spare is
        best (the points on the Spire are lost); short of that, the bigger the closer."""
        left = self.config.black_spire_points - self.players[self.me]["spire_total"]
        return 6.0 - (value - left) if value >= left else float(value)

    def keep(self, kind: int) -> float:
        """Worth of holding a card: favors by how well they fit our own stack."""
        if VALUE[kind]:
            p = self.players[self.me]
            if p["spired"]:
                return 3.0
            light = self.lights(self.me, p["stack_total"] + VALUE[kind])
            return 3.0 + VALUE[kind] + 6 * light
        return KEEP.get(kind, 6.0 if kind in DARK_KINDS else 3.0)

    def damage(self, kind: int, target: int, count: int = 1) -> float:
        """Favor points a stack-hitting card takes off `target` (or a flat effect worth)."""
        stack = self.stack(target)
        if kind in STRIP:
            return float(sum(stack[-STRIP[kind] :]))
        if kind == BEELZE_BEATDOWN:
            return float(sum(stack))
        if kind == VOODOO:
            return float(sum(stack[-count:]))
        if kind == TOILING_TROUBLE:  # the target keeps its best pairs: assume the cheapest goes
            values = sorted(v for v in set(stack) if stack.count(v) >= 2)
            return 2.0 * values[0] if values else 0.0
        if kind == HEAVY_METAL:
            return sum(self.stack(t)[-1] for t in range(len(self.players)) if t != self.me and self.stack(t))
        return EFFECT.get(kind, 2.0)

    # --- scoring each decision -----------------------------------------------------------
    def score(self, action: int) -> float:
        family, kind, seat = decode(action)
        what = self.pending["kind"] if self.pending else "turn"
        if what == "turn":
            return self.turn_score(family, kind, seat)
        if what == "counter":
            return self.counter_score(action)
        if what == "toil":
            return -float(self.stack(self.me)[kind])  # give up the cheapest pair
        if what == "ouija":
            theirs = next(h["cards"] for h in self.pending["revealed"])
            worth = sum(self.keep(KIND_OF_NAME[c]) for c in theirs)
            mine = sum(self.keep(k) for k in self.hand)
            return {SWAP_HANDS: worth - mine, DISCARD_HAND: 0.6 * worth, LEAVE_HAND: 0.0}[action]
        if what == "dark_draw":
            return 1.0 if action == TAKE_DARK else 0.0
        if what == "voodoo":
            if action == DONE:
                return 0.0
            deeper = len(self.stack(self.pending["target"])) > self.pending["count"]
            return (5.0 - self.keep(kind)) if deeper else -10.0
        if action == TAKE_NOTHING:
            return 0.0  # Evil Eye (CC-8): any card is worth more than none
        if what in ("nerd_top", "alchemy"):
            return -self.keep(kind)  # the worst card goes back (and on top, for the next drawer)
        bonus = self.threat(seat) if family == "take" else 0.0
        return self.keep(kind) + bonus  # evil_eye, nerd_keep, necro, scry, hail: take the best

    def turn_score(self, family: str, kind: int, target: int) -> float:
        if family == "pass":
            return 0.0
        if family == "discard":
            return -self.keep(kind)
        me = self.players[self.me]
        if VALUE[kind]:
            if me["spired"]:
                return 5.0 + self.topple(VALUE[kind])
            light = self.lights(self.me, me["stack_total"] + VALUE[kind])
            return CANDLE * light + 10.0 + VALUE[kind] - (2.0 if kind == DARK_FAVOR_4 else 0.0)
        if kind in (SWITCHEROO, LIFE_SIPHON):
            theirs, mine = self.stack(target), self.stack(self.me)
            gain = theirs[-1] - (mine[-1] if kind == SWITCHEROO else 0)
            if me["spired"] and kind == LIFE_SIPHON:
                gain = 0
            light = self.lights(self.me, me["stack_total"] + gain)
            if kind == SWITCHEROO:
                their_total = self.players[target]["stack_total"] - gain
                if self.lights(target, their_total) > 0:
                    return -CANDLE  # never hand a rival its candle
            return CANDLE * light + 4.0 + (gain + max(gain, 0)) * (1 + 2 * self.threat(target))
        if target >= 0:
            return 4.0 + self.damage(kind, target) * (1 + 2 * self.threat(target))
        if kind == FEAR_THE_REAPER:
            return 2.0 * sum(p["hand_size"] for p in self.players if p["seat"] != self.me)
        if kind == HEAVY_METAL:
            return 4.0 + self.damage(kind, -1)
        return EFFECT.get(kind, 2.0)

    def counter_score(self, action: int) -> float:
        """Counter only when the window's outcome costs us at least COUNTER_AT."""
        if action == PASS:
            return 0.0
        p = self.pending
        kind = KIND_OF_NAME[p["card"]]
        if p["player"] == self.me:
            stake = -EFFECT.get(kind, 6.0)  # our own card: keep it alive
        elif p["target"] == self.me:
            stake = 1.5 * self.damage(kind, self.me, p["count"])
            if kind in (SWITCHEROO, LIFE_SIPHON):
                mine, theirs = self.stack(self.me), self.stack(p["player"])
                lost = mine[-1] - (theirs[-1] if kind == SWITCHEROO and theirs else 0) if mine else 0
                stake = 1.5 * lost
        elif kind == FEAR_THE_REAPER:
            stake = 2.0 * len(self.hand)
        elif kind == HEAVY_METAL:
            mine = self.stack(self.me)
            stake = float(mine[-1]) if mine else 0.0
        else:
            stake = 0.0
        resolving = p["counters"] % 2 == 0
        counters = sum(1 for k in self.hand if k == COUNTER_SPELL)
        return (stake if resolving else -stake) - COUNTER_AT + counters - 1


def evaluate(state: State) -> list[float]:
    """Estimated returns for search bots that stop rollouts early (GameSpec.evaluate): each
    seat's share of the progress toward CC-4's win, candles first, then the stack's fill.
    Public facts only (candles, stacks), so a determinisation cannot leak through it. Read
    straight from the state's public zones rather than through `view`: search bots call
    this once per iteration, and building a whole view cost more than the rollout."""
    s = cast(CrazyCultistsState, state)
    kinds = s.kind
    to_win = s.candles_to_win()
    progress = []
    for seat in range(s.num_players):
        total = 0
        for c in s.stacks[seat]:
            total += VALUE[kinds[c]]
        progress.append(0.05 + (s.candles[seat] + total / s.need(seat)) / to_win)
    whole = sum(progress)
    return [p / whole for p in progress]
