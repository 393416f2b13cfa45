"""Trash Cult's heuristic bot: score each legal action from what the seat may see, take the best.

It reads only `state.view(seat)` (its own hand, every tableau, the face-up trash) and the
config (public: the same rules for every seat), never other hands or deck order (G-3), so
it plays the same from a resampled state. Every config number that changes what an action
is worth reaches the scores: the food needed (through the view), the Snackrifice costs
(TC-7), and what each chaos card takes or gives (TC-11); docs/bots.md lists the fields that
cannot change a choice and why. The plan is
the book's: get a Cult Member, fill the Shrine, convert Hostages, pay for perks with cheap
cards (Hostages, Stash food) rather than the Shrine, poison and rob the leader, answer
poison with a Protection Spell, and Hide from chaos that would cost more than the Hide.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from ..core.game import GameSpec, State
from ..core.rng import tie_key
from .cards import (
    CONVERT_HOSTAGE,
    CULT_BY_NAME,
    FOOD,
    HIDE,
    KIND_BY_NAME,
    KIND_NAMES,
    PROTECTION_SPELL,
    RACCOON,
    RAT,
    SKUNK,
    SQUIRREL,
)
from .rules import N_ACTIONS, TrashCultState, argument, family

# What losing one card from a zone costs, in the score's units.
HOSTAGE_COST = 8
STASH_COST = 6
SHRINE_COST = 60
MEMBER_COST = 25
LAST_MEMBER_COST = 90
HIDE_COST = 25  # resolve chaos that costs less than this, Hide from the rest
NO_TARGET = -100  # a perk that would do nothing
# Action id -> the name of the _Table method that scores its family, spelled once, not per
# action scored.
_SCORER = tuple("_" + family(a) for a in range(N_ACTIONS))


class HeuristicBot:
    name = "heuristic"
    PARAMS: ClassVar[dict[str, type]] = {}

    def __init__(self, spec: GameSpec | None = None, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        table = _Table(state.view(seat), seat, state.config)
        if state.shuffle:  # a keyed game: couple the tie-breaks too (rng.tie_key)
            salt = self.rng.getrandbits(64)
            return max((table.score(a), tie_key(salt, a), a) for a in legal)[2]
        best = max((table.score(a), self.rng.random(), a) for a in legal)
        return best[2]


class _Table:
    """The view, read once into the few facts the scores use."""

    def __init__(self, view: dict[str, Any], seat: int, config: Any) -> None:
        self.view = view
        self.config = config
        self.seat = seat
        self.seats = view["seats"]
        self.me = view["seats"][seat]
        self.cult = CULT_BY_NAME.get(self.me["cult"], -1)
        self.food = KIND_NAMES[FOOD + self.cult] if self.cult >= 0 else ""
        self.need = view["food_needed"]
        self.have = len(self.me["shrine"])
        self.members = len(self.me["members"])
        self.hand = [KIND_BY_NAME[c] for c in view["hand"]]
        self.pending = view["pending"]

    def score(self, action: int) -> float:
        return getattr(self, _SCORER[action])(argument(action))

    # --- the seat's own actions ---------------------------------------------------------
    def _add(self, kind: int) -> float:
        if kind == FOOD + self.cult:
            return 100
        if kind == self.cult:
            return 95 if self.members == 0 else 60 if self.members < 2 else 30
        if kind < FOOD:
            return 70 if CONVERT_HOSTAGE in self.hand and self.members == 0 else 25
        return 15

    def _discard(self, kind: int) -> float:
        if kind in (FOOD + self.cult, self.cult, PROTECTION_SPELL, HIDE):
            return -50
        return 5

    def _snackrifice_member(self, kind: int) -> float:
        cost = LAST_MEMBER_COST if self.members == 1 else MEMBER_COST
        return self._perk(kind) - cost - self._chaos_risk()

    def _snackrifice_hostages(self, kind: int) -> float:
        return self._perk(kind) - self.config.snackrifice_hostage_cost * HOSTAGE_COST - self._chaos_risk()

    def _snackrifice_food(self, cult: int) -> float:
        cost = SHRINE_COST if cult == self.cult else STASH_COST
        return self._perk(cult) - self.config.snackrifice_food_cost * cost - self._chaos_risk()

    def _convert_hostage(self, kind: int) -> float:
        return 90 if self.members == 0 else 45

    def _opossum_plushie(self, cult: int) -> float:
        return max(self._perk(cult) - 5, 2)

    def _pigeon_thief(self, seat: int) -> float:
        return 35 + self.seats[seat]["hand_size"]

    def _poison_their_punch(self, seat: int) -> float:
        target = self.seats[seat]
        if not target["members"]:
            return -10
        shrine = len(target["shrine"])
        return 30 + 20 * shrine + (40 if shrine >= self.need - 1 else 0)

    def _pass(self, _arg: int) -> float:
        return 0

    def _keep(self, _arg: int) -> float:
        return 20

    def _pick_cult(self, _cult: int) -> float:
        return 0

    def _perk(self, perk: int) -> float:
        """What using `perk` is worth to this seat now."""
        others = [s for i, s in enumerate(self.seats) if i != self.seat]
        if perk == RACCOON:
            return 80 if any(self.food in s["stash"] for s in others) else NO_TARGET
        if perk == SKUNK:
            leader = max(len(s["shrine"]) for s in others)
            return 30 + 15 * leader if leader else NO_TARGET
        if perk == RAT:
            return 80 if self.food in self.view["trash"] else NO_TARGET
        return 60 if self.have < self.need or self.members == 0 else 10  # SQUIRREL

    def _chaos_risk(self) -> float:
        return 10 + 10 * self.have

    # --- answers and choices inside effects ---------------------------------------------
    def _protection_spell(self, _arg: int) -> float:
        p = self.pending
        if p["event"] == "poison":
            return 50 if p["target"] == self.seat and self.me["members"] else -10
        actor = self.seats[self.view["active"]]
        perk = CULT_BY_NAME[p["perk"]]
        if perk == SKUNK and self.me["shrine"]:
            return 40
        actor_food = KIND_NAMES[FOOD + CULT_BY_NAME[actor["cult"]]]
        if perk == RACCOON and actor_food in self.me["stash"]:
            return 30
        if len(actor["shrine"]) >= self.need - 1 and perk in (RACCOON, RAT, SQUIRREL):
            return 30
        return -10

    def _no_protection(self, _arg: int) -> float:
        return 0

    def _perk_target(self, seat: int) -> float:
        return len(self.seats[seat]["shrine"])

    def _search_take(self, kind: int) -> float:
        if kind == FOOD + self.cult:
            return 100 if self.have < self.need else 40
        if kind == self.cult:
            return 95 if self.members == 0 else 50
        if kind == CONVERT_HOSTAGE:
            return 80 if self.me["hostages"] and self.members == 0 else 30
        return {PROTECTION_SPELL: 40, HIDE: 30}.get(kind, 10)

    def _hide(self, _arg: int) -> float:
        return -HIDE_COST

    def _resolve(self, _arg: int) -> float:
        me = self.me
        chaos = self.pending["chaos"]
        cfg = self.config
        converted = sum(me["converted"])
        eclipse = converted * MEMBER_COST + (LAST_MEMBER_COST if converted == self.members > 0 else 0)
        cost = {
            "Animal Control": HOSTAGE_COST * len(me["hostages"]),
            "Trashnado": STASH_COST * len(me["stash"]),
            "Garbage Trucks Broke Down": -5 * cfg.garbage_trucks_draw,  # cards are a gain
            "Lunar Eclipse": eclipse,
            "Trash Swap": 5,
            "Thunderstorm": SHRINE_COST * min(cfg.thunderstorm_food, self.have),
        }.get(chaos, 0)
        return -cost

    def _either_or(self) -> tuple[int, int]:
        """(animals, food) the chaos card in play asks for (TC-11, config amounts)."""
        return self.config.either_or(KIND_BY_NAME[self.pending["chaos"]])

    def _lose_animals(self, _arg: int) -> float:
        count = self._either_or()[0]
        costs = sorted([HOSTAGE_COST] * len(self.me["hostages"]) + self._member_costs())
        return -sum(costs[:count])

    def _lose_food(self, _arg: int) -> float:
        count = self._either_or()[1]
        costs = sorted([STASH_COST] * len(self.me["stash"]) + [SHRINE_COST] * self.have)
        return -sum(costs[:count])

    def _member_costs(self) -> list[int]:
        return [LAST_MEMBER_COST if self.members == 1 else MEMBER_COST] * self.members

    def _trash_member(self, _kind: int) -> float:
        return -self._member_costs()[0]

    def _trash_hostage(self, _kind: int) -> float:
        return -HOSTAGE_COST

    def _trash_food(self, cult: int) -> float:
        return -SHRINE_COST if cult == self.cult else -STASH_COST


def evaluate(state: TrashCultState) -> list[float]:
    """Estimated returns for search bots that stop rollouts early (GameSpec.evaluate): each
    seat's share of the progress toward TC-17's win, a full Shrine and a Cult Member.
    Public facts only, so a determinisation cannot leak through it."""
    n = state.num_players
    need = state.config.food_needed(n)
    progress = [
        0.05 + min(len(state.shrine[s]), need) / need + (0.25 if state.members[s] else 0.0) for s in range(n)
    ]
    total = sum(progress)
    return [p / total for p in progress]
