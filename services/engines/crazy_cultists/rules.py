"""Crazy Cultists: the rules (rulebook seeds/002, rulings CC-1..CC-11 and G-1..G-5).

Each player builds a Favor Stack; reaching the candle threshold discards the stack and earns
a candle, and the first to the winning number of candles wins (CC-4). On a turn the active
player plays one card (a favor onto its stack, or a Hijinx / Dark Power at someone) and then
everyone draws back up to the hand limit (CC-3, CC-7).

How this file is laid out:
- the action encoding (small ints, decoded by `decode`) and the pending-decision kinds;
- the state: setup, the decision vocabulary (`to_act`, `legal_actions`, `_apply`), then the
  rules in the order a turn uses them: play, Counter-Spell window, effects, candles, draw-up,
  next turn; then views, labels, invariants and re-dealing for hidden information.

Every out-of-turn question is asked of every eligible seat, holding the answering card or
not (a seat without one has the single action "pass"), so who is asked never reveals a hand.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from itertools import chain
from math import isqrt
from typing import TYPE_CHECKING, Any, cast

from services.engines.core.decks import (
    check_conservation,
    draw,
    kind_counts,
    redeal_keeping,
    shuffle_in_place,
)
from services.engines.core.errors import BadConfig, BadState
from services.engines.core.game import FISHER_YATES, State
from services.engines.core.rng import Rng, card_tags

from .cards import (
    ALCHEMY_DRAW,
    ALCHEMY_RETURN,
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
    LIFE_SIPHON,
    MAIN_FAVORS,
    MAIN_KINDS,
    NAMES,
    NECROMANCY,
    NERDRONOMICON,
    NERDRONOMICON_LOOK,
    NUM_KINDS,
    OUIJA,
    POLYMORPHIZATION,
    PUPPET_MASTER,
    SCRYING_BONES,
    STRIP,
    SWITCHEROO,
    TARGETED,
    TITLES,
    TOILING_TROUBLE,
    VALUE,
    VOODOO,
    kind_table,
)

# --- actions: a family base plus a payload ------------------------------------------------
# Every code is a family's base plus its payload, and the bases are built from the number of
# card kinds (as Trash Cult's FAMILIES): ACTION_FAMILIES gives each family its room and the
# step its base is rounded up to, so a card kind added to cards.py moves the bases after it
# and no code is ever placed by hand. The steps keep the codes of the 27 printed kinds what
# they always were (DISCARD 200, CHOOSE 300, TAKE 400, PASS 600, PAIR 1000: stored games
# and replays need no mapping) and make a code readable in a log by its hundreds.
NO_TARGET = 6  # target slot of a card played on yourself or the whole table (seats are 0..5)
PLAY_ROOM = NO_TARGET + 1  # one play code per target slot of each kind
TAKE_ROOM = 1 << (NUM_KINDS - 1).bit_length()  # a seat's room of Hail Yourself codes: kinds, to a power of 2
# The fixed answers, in code order from PASS: (name, words).
FIXED_ACTIONS = (
    ("pass", "pass"),  # no Counter-Spell now; or an empty hand on your turn
    ("counter", "play Counter-Spell"),  # play a Counter-Spell into the open window (CC-7)
    ("done", "discard no more cards"),  # Voodoo: discard no more cards with it
    ("take_dark", "take the top Dark Powers card"),  # CC-10: instead of this main-deck draw
    ("draw_main", "draw from the main deck"),
    ("swap_hands", "swap hands"),  # Ouija's three choices
    ("discard_hand", "make them discard their hand"),
    ("leave_hand", "leave their hand"),
    ("take_nothing", "take nothing"),  # Evil Eye: the player may take nothing (CC-8)
)
# (family, codes it holds, step its base is rounded up to), in code order.
ACTION_FAMILIES = (
    ("play", NUM_KINDS * PLAY_ROOM, 100),  # + PLAY_ROOM * kind + target seat (or NO_TARGET)
    ("discard", NUM_KINDS, 100),  # + kind: CC-3's discard when no card can be played
    ("choose", NUM_KINDS, 100),  # + kind: pick a card of that kind for the pending effect
    ("take", NO_TARGET * TAKE_ROOM, 100),  # + TAKE_ROOM * seat + kind: Hail Yourself's take
    ("fixed", len(FIXED_ACTIONS), 100),  # + index in FIXED_ACTIONS
    ("pair", 0, 1000),  # + j * (j - 1) // 2 + i: Toiling Trouble's pair at i < j (CC-6), unbounded
)


def _family_bases() -> list[int]:
    """Each family's base: the first multiple of its step past the codes before it."""
    bases: list[int] = []
    end = 0
    for _name, size, step in ACTION_FAMILIES:
        base = -(-end // step) * step
        bases.append(base)
        end = base + size
    return bases


_BASES = _family_bases()
PLAY = _BASES[0]
DISCARD = _BASES[1]
CHOOSE = _BASES[2]
TAKE = _BASES[3]
# The fixed answers, one code each from the family's base, in FIXED_ACTIONS' order.
(
    PASS,
    COUNTER,
    DONE,
    TAKE_DARK,
    DRAW_MAIN,
    SWAP_HANDS,
    DISCARD_HAND,
    LEAVE_HAND,
    TAKE_NOTHING,
) = range(_BASES[4], _BASES[4] + len(FIXED_ACTIONS))
PAIR = _BASES[5]


# Each card kind as every game's events name a card (`Card`): its machine name, as the
# action details give it, and its printed title. Made once: an event's payload is built
# even where nobody listens (simulations), so it must cost a lookup.
_CARDS = tuple({"id": name, "name": title} for name, title in zip(NAMES, TITLES, strict=True))


def _card(kind: int) -> dict[str, str]:
    return _CARDS[kind]


# Each fixed answer's code -> (name, words).
FIXED = {PASS + i: named for i, named in enumerate(FIXED_ACTIONS)}


def decode(action: int) -> tuple[str, int, int]:
    """(family, kind, seat) of an action; kind and seat are -1 where the family has none.

    Families: play, discard, choose, take, pair (kind = i, seat = j: stack positions), and the
    fixed ones in FIXED. Unknown integers decode to ("unknown", -1, -1).
    """
    if PLAY <= action < PLAY + NUM_KINDS * PLAY_ROOM:
        kind, target = divmod(action - PLAY, PLAY_ROOM)
        return "play", kind, -1 if target == NO_TARGET else target
    elif DISCARD <= action < DISCARD + NUM_KINDS:
        return "discard", action - DISCARD, -1
    elif CHOOSE <= action < CHOOSE + NUM_KINDS:
        return "choose", action - CHOOSE, -1
    elif TAKE <= action < TAKE + NO_TARGET * TAKE_ROOM:
        seat, kind = divmod(action - TAKE, TAKE_ROOM)
        if kind < NUM_KINDS:
            return "take", kind, seat
    elif action in FIXED:
        return FIXED[action][0], -1, -1
    elif action >= PAIR:
        index = action - PAIR
        j = (1 + isqrt(1 + 8 * index)) // 2
        return "pair", index - j * (j - 1) // 2, j
    return "unknown", -1, -1


def pair_action(i: int, j: int) -> int:
    return PAIR + j * (j - 1) // 2 + i


def encode(family: str, kind: int = -1, seat: int = -1) -> int:
    """The action `decode` reads as (family, kind, seat): its inverse on every action the
    rules offer (tests/crazy_cultists/test_action_codes.py). For "pair", kind and seat are
    the stack positions i < j, as `decode` gives them."""
    if family == "play":
        return PLAY + PLAY_ROOM * kind + (NO_TARGET if seat < 0 else seat)
    if family == "discard":
        return DISCARD + kind
    if family == "choose":
        return CHOOSE + kind
    if family == "take":
        return TAKE + TAKE_ROOM * seat + kind
    if family == "pair":
        return pair_action(kind, seat)
    for action, (name, _) in FIXED.items():
        if name == family:
            return action
    raise ValueError(f"no action family {family!r}")


# --- pending decisions -------------------------------------------------------------------
# Every pending record has the same keys (docs/games/crazy_cultists.md):
#   kind    what is being decided (below)
#   player  the seat that played the card (dark_draw: the seat drawing)
#   target  the seat it was played at, -1 for none
#   card    the card in play (-1 for dark_draw)
#   count   voodoo/counter: cards discarded with Voodoo; alchemy: returns left;
#           dark_draw: how far round the table the draw-up had got (seats after active)
#   chain   Counter-Spells played into the window so far (CC-7)
#   asked   seats still to answer the window, in order; the first decides now
#   cards   Nerdronomicon's looked-at cards
# Who decides: the first of `asked` for counter, the target for toil, else the player.
#
# DECISIONS holds what each decision is, in one place: the card whose effect asks it (-1 for
# the game's own questions), how a pick of a card (CHOOSE) reads, what it shows and to whom
# (the view and the re-deal of hidden cards both read `shows`), and how many looked-at cards
# the record holds. `shows` is "" (nothing), "target_hand" (the target's hand, to the
# player), "looked" (the looked-at cards, to the player), "deck" (the deck's contents, never
# its order, to the player: G-3) or "hands" (every other hand, to the whole table).


def _decision(
    card: int, words: str = "", shows: str = "", looked: tuple[int, int] = (0, 0)
) -> dict[str, Any]:
    return {"card": card, "words": words, "shows": shows, "looked": looked}


DECISIONS = {
    # pick extra cards to discard with Voodoo (CC-10), or DONE
    "voodoo": _decision(VOODOO, "also discard {}"),
    "counter": _decision(-1),  # the Counter-Spell window (CC-7, G-4)
    "toil": _decision(TOILING_TROUBLE),  # the target picks the pair (CC-6)
    # CC-8: the player takes a card from the hand shown to it
    "evil_eye": _decision(EVIL_EYE, "take {} from their hand", "target_hand"),
    # Nerdronomicon: keep one of the top cards, then which of the other two goes back on top
    "nerd_keep": _decision(NERDRONOMICON, "keep {}", "looked", (1, NERDRONOMICON_LOOK)),
    "nerd_top": _decision(NERDRONOMICON, "put {} back on top", "looked", (2, 2)),
    # Ouija: swap hands, make them discard, or leave it (the target's hand shown to the player)
    "ouija": _decision(OUIJA, "", "target_hand"),
    # Hail Yourself: "All players must reveal their hands"; take one card from any of them
    "hail": _decision(HAIL_YOURSELF, "", "hands"),
    "necro": _decision(NECROMANCY, "take {} from the discard pile"),  # from the main discard
    "scry": _decision(SCRYING_BONES, "take {} from the deck", "deck"),  # from the main deck
    # Forbidden Alchemy: return cards to the top of the deck, one at a time
    "alchemy": _decision(FORBIDDEN_ALCHEMY, "return {} to the deck"),
    "dark_draw": _decision(-1),  # CC-10: Dark Powers card instead of this main-deck draw?
}
PENDING_KINDS = tuple(DECISIONS)
PENDING_KEYS = frozenset({"kind", "player", "target", "card", "count", "chain", "asked", "cards"})


def _record(kind: str, player: int, target: int, card: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "player": player,
        "target": target,
        "card": card,
        "count": 0,
        "chain": [],
        "asked": [],
        "cards": [],
    }


def _distinct(kinds: tuple[int, ...], zone: list[int], base: int) -> list[int]:
    """One action per kind present in `zone`: same-kind cards are the same choice."""
    out: list[int] = []
    seen = 0
    for c in zone:
        k = kinds[c]
        bit = 1 << k
        if not seen & bit:
            seen |= bit
            out.append(base + k)
    return out


def _pairs(kinds: tuple[int, ...], stack: list[int]) -> list[tuple[int, int]]:
    """Positions i < j of same-value cards in a stack, by j then i (Toiling Trouble, CC-6)."""
    out: list[tuple[int, int]] = []
    for j in range(1, len(stack)):
        c = stack[j]
        k = kinds[c]
        value = VALUE[k]
        for i in range(j):
            c = stack[i]
            k = kinds[c]
            if VALUE[k] == value:
                out.append((i, j))
    return out


# Kind sets as bit masks (kinds are below 27), so a compiled test is one C shift and mask.
_TARGETED_BITS = sum(1 << k for k in TARGETED)
_MAIN_FAVOR_BITS = sum(1 << k for k in MAIN_FAVORS)


# --- when a card can be played (CC-5's FAQ) ------------------------------------------
# A card that would do nothing cannot be played: PLAYABLE names each card's condition, which
# `_would_hit` tests at each seat a card in TARGETED could be played at, and `_would_act`
# once for the others. A new card names its condition here; only a new kind of condition
# is a branch of those two.
(
    _HIT_STACK,  # the target's stack holds a card: the stack discards, Life Siphon, Voodoo
    _HIT_UNMARKED,  # Polymorphization: a seat already marked would skip the same turn again
    _HIT_HAND,  # the target holds a card: Evil Eye, Ouija
    _HIT_NO_SPIRE,  # Black Spire: a second Spire would do nothing until the first falls
    _HIT_PAIR,  # Toiling Trouble: the target's stack holds a pair of the same value (CC-6)
    _HIT_BOTH_STACKS,  # Switcheroo: both stacks hold a card to swap
    _ACT_ALWAYS,  # Dark Baptism, Forbidden Alchemy
    _ACT_DECK,  # a card in the deck or the discard pile: Nerdronomicon, Scrying Bones
    _ACT_DISCARD,  # Necromancy: a card in the discard pile
    _ACT_HAIL,  # Hail Yourself: a hand it may take from (_hail_seats)
    _ACT_OTHER_HANDS,  # Fear The Reaper: another seat holds a card
    _ACT_OTHER_STACKS,  # Heavy Metal: another seat's stack holds a card
    _ACT_HANDS_MOVE,  # Puppet Master: some hand besides the card itself
) = range(13)
PLAYABLE = {
    FALL_FROM_GRACE: _HIT_STACK,
    POLYMORPHIZATION: _HIT_UNMARKED,
    INFERNAL_INFERNO: _HIT_STACK,
    TOILING_TROUBLE: _HIT_PAIR,
    HEX_O_RAMA: _HIT_STACK,
    EVIL_EYE: _HIT_HAND,
    BEELZE_BEATDOWN: _HIT_STACK,
    NERDRONOMICON: _ACT_DECK,
    SWITCHEROO: _HIT_BOTH_STACKS,
    LIFE_SIPHON: _HIT_STACK,
    BLACK_SPIRE: _HIT_NO_SPIRE,
    NECROMANCY: _ACT_DISCARD,
    DARK_BAPTISM: _ACT_ALWAYS,
    OUIJA: _HIT_HAND,
    FEAR_THE_REAPER: _ACT_OTHER_HANDS,
    PUPPET_MASTER: _ACT_HANDS_MOVE,
    FORBIDDEN_ALCHEMY: _ACT_ALWAYS,
    SCRYING_BONES: _ACT_DECK,
    HAIL_YOURSELF: _ACT_HAIL,
    VOODOO: _HIT_STACK,
    HEAVY_METAL: _ACT_OTHER_STACKS,
}
_PLAYABLE = tuple(PLAYABLE.get(k, -1) for k in range(NUM_KINDS))
# Every card played from the hand but the favors and Counter-Spell has a condition, and the
# cards tested at a target are exactly the targeted ones: a card missing here fails at import.
_UNPLAYABLE = {k for k in range(NUM_KINDS) if not VALUE[k] and k != COUNTER_SPELL} ^ set(PLAYABLE)
if _UNPLAYABLE or {k for k, c in PLAYABLE.items() if c < _ACT_ALWAYS} != TARGETED:
    raise ImportError(f"PLAYABLE disagrees with the card kinds or TARGETED: {sorted(_UNPLAYABLE)}")


def _last_of(zone: list[int], kinds: tuple[int, ...], k: int) -> int:
    """Index of the last card of kind `k` in `zone`, -1 if there is none."""
    for i in range(len(zone) - 1, -1, -1):
        c = zone[i]
        if kinds[c] == k:
            return i
    return -1


def _favor(kinds: tuple[int, ...], zone: list[int]) -> int:
    """Favor points the cards in `zone` are worth (CC-4)."""
    total = 0
    for c in zone:
        k = kinds[c]
        total += VALUE[k]
    return total


def _forget_in(records: list[list[int]], cards: Any, keep: int, only: int, n: int) -> None:
    """`_forget` for one kind of record: seat `only` (all seats if negative) but `keep`."""
    lo, hi = 0, n
    if only >= 0:
        lo, hi = only, only + 1
    for s in range(lo, hi):
        record = records[s]
        if record and s != keep:
            for card in cards:
                if card in record:  # most moves touch no record: leave it be
                    record[:] = [c for c in record if c not in cards]
                    break


def check_players(config: Any, players: int) -> None:
    """CC-2: the game is for 3-6; 2 players only when the config asks for the sweep variant."""
    if players == 2 and not config.two_players:
        raise BadConfig(
            "Crazy Cultists takes 3-6 players; 2 players is a variant for balance sweeps only "
            "(CC-2): set two_players=true to play it"
        )


@functools.cache
def _printed_decks(config_class: type) -> tuple[dict[int, int], dict[int, int]]:
    """The printed rules' main and Dark Powers decks as kind -> copies: what a keyed deal
    is coupled with (fairness.md, "Coupled deals")."""
    counts = kind_counts(kind_table(config_class(dark_powers=True))[0])
    return (
        {k: n for k, n in counts.items() if k in MAIN_KINDS},
        {k: n for k, n in counts.items() if k in DARK_KINDS},
    )


class CrazyCultistsState(State):
    if TYPE_CHECKING:  # rules.pxd declares them for compiled builds; _derive sets them
        kind: tuple[int, ...]
        n_main: int
        _hand_limit: int
        _max_turns: int
        _derived_for: Any
        _tags: tuple[int, ...]
        _refill_tags: tuple[int, ...] | None

    # Older documents (before issue 16) lack what seats remember: nothing remembered.
    ADDED_FIELDS = {
        "known": lambda doc, players: [[] for _ in range(players)],
        "known_deck": lambda doc, players: [[] for _ in range(players)],
    }
    KEYED_DEALS = True  # every shuffle goes through shuffle_cards / deal_cards
    FIELDS = (
        "deck",  # main deck, top at the end
        "discard",  # main discard pile, face up
        "hands",
        "stacks",  # favor stacks, bottom first
        "candles",
        "poly",  # each seat's Polymorphization marker card, -1 for none (CC-3)
        "spire",  # each seat's Black Spire: [] or [spire card, favor cards on it...] (CC-10)
        "dark_deck",
        "dark_discard",
        "dark_due",  # candles earned whose Dark Powers draw is still to come (CC-10)
        "baptized",  # Dark Baptism: no Hijinx may target this seat (CC-10)
        "active",
        "extra_turn",  # Dark Baptism: the active seat goes again
        "pending",
        "winner",
        "over",
        # What each seat knows of cards it cannot see (G-3, issue 16): ids whose place it
        # knows exactly (another hand, a deck position), and main-deck cards it knows are
        # somewhere in the deck after a search. An id leaves when it moves out of sight.
        "known",
        "known_deck",
    )

    def __init__(
        self,
        config: Any,
        num_players: int,
        seed: int,
        deal_key: bytes | None = None,
        shuffle: int = FISHER_YATES,
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        check_players(config, num_players)
        self._derive()
        if self.n_main < num_players * config.starting_hand:
            raise BadConfig(
                f"the main deck has {self.n_main} cards, too few to deal "
                f"{config.starting_hand} to each of {num_players} players"
            )
        n = num_players
        self.deck = list(range(self.n_main))
        # keyed deals couple with them (a class is hashable; mypy's cache typing says not)
        main_printed, dark_printed = _printed_decks(type(config))  # type: ignore[arg-type]
        self.deal_cards(self.deck, self.kind, main_printed)
        self.dark_deck = list(range(self.n_main, len(self.kind)))
        self.deal_cards(self.dark_deck, self.kind, dark_printed)
        self.discard: list[int] = []
        self.dark_discard: list[int] = []
        self.hands = [[self.deck.pop() for _ in range(config.starting_hand)] for _ in range(n)]
        self.stacks: list[list[int]] = [[] for _ in range(n)]
        self.candles = [0] * n
        self.poly = [-1] * n
        self.spire: list[list[int]] = [[] for _ in range(n)]
        self.dark_due = [0] * n
        self.baptized = [False] * n
        self.active = 0  # G-1
        self.extra_turn = False
        self.pending: dict[str, Any] | None = None
        self.winner = -1
        self.over = False
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.known_deck: list[list[int]] = [[] for _ in range(n)]
        self._start_turn(0, regular=True)

    # The id -> kind table (`kind`, `n_main`) and the config values every turn reads are
    # derived from the config, not stored. Clones and restored states are built without
    # __init__: `clone` copies them, and `from_json` derives them (in `check_invariants`,
    # which runs before the state is returned, when the document is not trusted). Plain
    # fields, not lazy attributes: compiled, a field is read from the object where a
    # cached_property or a config attribute costs a lookup per read, and the rules read
    # the table on nearly every step.
    def _derive(self, like: CrazyCultistsState | None = None) -> None:
        if like is not None:  # a clone: the same config (spares IS-MCTS the table lookup)
            self.kind, self.n_main = like.kind, like.n_main
            self._hand_limit, self._max_turns = like._hand_limit, like._max_turns
            self._tags, self._refill_tags = like._tags, like._refill_tags
            self._derived_for = like._derived_for
            return
        # The rules' two entry points derive them again if a position set up by hand was
        # given another config since (`_derived_for`: one pointer comparison).
        cfg = self._derived_for = self.config
        self.kind, self.n_main = kind_table(cfg)
        self._hand_limit, self._max_turns = cfg.hand_limit, cfg.max_turns
        # Each card's key in a keyed shuffle (cached per deck); what `draw` refills with.
        self._tags = card_tags(self.kind)
        self._refill_tags = self._tags if self.shuffle else None

    def clone(self) -> CrazyCultistsState:
        new = cast(CrazyCultistsState, super().clone())
        new._derive(self)
        return new

    @classmethod
    def from_json(cls, doc: dict[str, Any], copy: bool = True, trusted: bool = False) -> State:
        new = cast(CrazyCultistsState, super().from_json(doc, copy, trusted))
        if trusted:
            new._derive()
        return new

    # --- the decision vocabulary --------------------------------------------------------
    def to_act(self) -> list[int]:
        return [] if self.over else [self._decider()]

    def _decider(self) -> int:
        p = self.pending
        if p is None:
            return self.active
        if p["kind"] == "counter":
            return p["asked"][0]
        if p["kind"] == "toil":
            return p["target"]
        return p["player"]

    def is_terminal(self) -> bool:
        return self.over

    def winners(self) -> list[int]:
        return [self.winner] if self.winner >= 0 else []

    def legal_actions(self, seat: int) -> list[int]:
        if self._derived_for is not self.config:  # a config set on the state since
            self._derive()
        if self.over or seat != self._decider():
            return []
        p = self.pending
        if p is None:
            return self._turn_actions(seat)
        if p["kind"] == "counter":  # asked of every seat after every card: tested here
            return [COUNTER, PASS] if _last_of(self.hands[seat], self.kind, COUNTER_SPELL) >= 0 else [PASS]
        # Every other decision's actions are its `_legal_<decision>`, beside its handler.
        return _LEGAL[p["kind"]](self, seat, p)

    def _turn_actions(self, seat: int) -> list[int]:
        """CC-3: one card that can legally be played; if none can, discard one instead."""
        hand = self.hands[seat]
        if not hand:
            return [PASS]  # only when both decks have run dry
        kinds = self.kind
        out: list[int] = []
        seen = 0
        targets: list[int] | None = None  # worked out once, when the hand first needs them
        for c in hand:
            k = kinds[c]
            bit = 1 << k
            if seen & bit:
                continue
            seen |= bit
            base = PLAY + PLAY_ROOM * k
            if VALUE[k]:  # a favor card can always be stacked
                out.append(base + NO_TARGET)
            elif _TARGETED_BITS >> k & 1:
                if targets is None:
                    # CC-10 Dark Baptism: no Hijinx may target a baptized seat.
                    baptized = self.baptized
                    n = self.num_players
                    targets = [t for t in range(n) if t != seat and not baptized[t]]
                for t in targets:
                    if self._would_hit(k, seat, t):
                        out.append(base + t)
            elif k != COUNTER_SPELL and self._would_act(k, seat):
                out.append(base + NO_TARGET)
        return out or _distinct(kinds, hand, DISCARD)

    def _would_hit(self, k: int, seat: int, target: int) -> bool:
        """CC-5's FAQ: a card that would do nothing to its target cannot be played on it
        (the card's condition in PLAYABLE)."""
        condition = _PLAYABLE[k]
        stack = self.stacks[target]
        if condition == _HIT_STACK:
            return bool(stack)
        if condition == _HIT_UNMARKED:
            return self.poly[target] < 0
        if condition == _HIT_HAND:
            return bool(self.hands[target])
        if condition == _HIT_NO_SPIRE:
            return not self.spire[target]
        if condition == _HIT_PAIR:
            return bool(_pairs(self.kind, stack))
        return bool(stack) and bool(self.stacks[seat])  # _HIT_BOTH_STACKS

    def _would_act(self, k: int, seat: int) -> bool:
        """CC-5's FAQ for cards played on yourself or the table (their condition in PLAYABLE)."""
        condition = _PLAYABLE[k]
        if condition == _ACT_ALWAYS:
            return True
        if condition == _ACT_DECK:
            return bool(self.deck or self.discard)
        if condition == _ACT_DISCARD:
            return bool(self.discard)
        if condition == _ACT_HAIL:
            return bool(self._hail_seats(seat))
        # Lists, not generators, inside any(): Cython refuses a generator in a cpdef method.
        others = [t for t in range(self.num_players) if t != seat]
        if condition == _ACT_OTHER_HANDS:
            return any([self.hands[t] for t in others])
        if condition == _ACT_OTHER_STACKS:
            return any([self.stacks[t] for t in others])
        # _ACT_HANDS_MOVE: some hand besides the card itself must move.
        return len(self.hands[seat]) > 1 or any([self.hands[t] for t in others])

    def _hail_seats(self, seat: int) -> list[int]:
        # Taking a card from a player singles it out, so Dark Baptism shields it (CC-10).
        return [t for t in range(self.num_players) if t != seat and self.hands[t] and not self.baptized[t]]

    def _apply(self, seat: int, action: int) -> None:
        if self._derived_for is not self.config:  # a config set on the state since
            self._derive()
        p = self.pending
        if p is None:
            self._play(seat, action)
            return
        # The Counter-Spell window is asked after every card, often of every seat: a direct
        # call; every other decision's handler is `_on_<decision>`, found by name (_ON).
        what = p["kind"]
        if what == "counter":
            self._on_counter(p, action)
        else:
            _ON[what](self, p, action)

    # --- playing a card (CC-3) ----------------------------------------------------------
    def _play(self, seat: int, action: int) -> None:
        hand = self.hands[seat]
        if action == PASS:
            self.emit("pass", seat, "seat {} has no cards and passes", seat)
            self._end_turn()
            return
        if action >= DISCARD:
            card = self._take(hand, action - DISCARD)
            self._trash(card)
            if self.log is not None:
                self.emit(
                    "discard",
                    seat,
                    "seat {} can play nothing and discards {}",
                    seat,
                    TITLES[action - DISCARD],
                    card=_card(action - DISCARD),
                )
            self._end_turn()
            return
        k, target = divmod(action - PLAY, PLAY_ROOM)
        card = self._take(hand, k)
        self._forget((card,))
        # Every turn plays a card: with the log off (simulation) not even the emit call.
        logged = self.log is not None
        if _MAIN_FAVOR_BITS >> k & 1:
            if logged:
                self.emit("play", seat, "seat {} stacks {}", seat, TITLES[k], card=_card(k))
            self._add_favor(seat, card)
            if not self.over:
                self._end_turn()
            return
        if target == NO_TARGET:
            target = -1
            if logged:
                self.emit("play", seat, "seat {} plays {}", seat, TITLES[k], card=_card(k))
        elif logged:
            self.emit(
                "play",
                seat,
                "seat {} plays {} on seat {}",
                seat,
                TITLES[k],
                target,
                card=_card(k),
                target=target,
            )
        record = _record("voodoo" if k == VOODOO else "counter", seat, target, card)
        if k == VOODOO:
            record["count"] = 1  # Voodoo counts itself (as printed: "including this card")
            if hand:
                self.pending = record
                return
        self._open_window(record)

    def _legal_voodoo(self, seat: int, p: dict[str, Any]) -> list[int]:
        return [*_distinct(self.kind, self.hands[seat], CHOOSE), DONE]

    def _on_voodoo(self, p: dict[str, Any], action: int) -> None:
        """CC-10 Voodoo: discard any number of cards with it, one pick at a time."""
        hand = self.hands[p["player"]]
        if action != DONE:
            self._trash(self._take(hand, action - CHOOSE))
            p["count"] += 1
            self.emit(
                "discard",
                p["player"],
                "seat {} discards {} with Voodoo",
                p["player"],
                TITLES[action - CHOOSE],
                card=_card(action - CHOOSE),
            )
            if hand:
                return
        self._open_window(p)

    # --- the Counter-Spell window (CC-7, G-4) -------------------------------------------
    def _open_window(self, p: dict[str, Any]) -> None:
        n = self.num_players
        player = p["player"]
        p["kind"] = "counter"
        p["asked"] = [(player + i) % n for i in range(1, n)]
        self.pending = p

    def _on_counter(self, p: dict[str, Any], action: int) -> None:
        asked = p["asked"]
        seat = asked[0]
        if action == PASS:
            del asked[0]
            if not asked:
                self._close_window(p)
            return
        # A Counter-Spell can itself be countered by anyone, the original player too (CC-7).
        # G-4: the new round of asking starts again from the active seat, skipping the seat
        # that just answered: seat 1 countering seat 0's card asks [0, 2, 3].
        n = self.num_players
        active = self.active
        card = self._take(self.hands[seat], COUNTER_SPELL)
        p["chain"].append(card)
        self._forget((card,))
        p["asked"] = [(active + i) % n for i in range(n) if (active + i) % n != seat]
        self.emit(
            "counter", seat, "seat {} plays Counter-Spell ({} in the chain)", seat, len(p["chain"]),
            card=_card(COUNTER_SPELL), count=len(p["chain"]),
        )  # fmt: skip

    def _close_window(self, p: dict[str, Any]) -> None:
        counters = p["chain"]
        self.discard.extend(counters)
        self.pending = None
        card = p["card"]
        if len(counters) % 2:  # CC-7: an odd chain cancels the card
            self.emit(
                "cancel", p["player"], "{} is cancelled", TITLES[self.kind[card]], card=_card(self.kind[card])
            )
            self._trash(card)
            self._end_turn()
            return
        p["chain"] = []
        self._resolve(p)

    # --- effects: Hijinx read from the target's side, Dark Powers from the player's (CC-5, CC-10)
    # One card, one place: each card's effect is its method `_effect_<name>` (its name in
    # cards.NAMES), followed by the handlers `_on_<decision>` of the decisions it asks (its
    # entries of DECISIONS: words, what they show), so the table after the class finds both
    # by name. An effect returns True when it has ended the step itself (asked a decision,
    # left the card on the table, ended the turn); otherwise the card is discarded and the
    # turn ends (`_finish`).
    def _resolve(self, p: dict[str, Any]) -> None:
        if not _EFFECTS[self.kind[p["card"]]](self, p):
            self._finish(p["card"])

    def _ask(self, kind: str, p: dict[str, Any]) -> None:
        p["kind"] = kind
        self.pending = p

    def _finish(self, card: int = -1) -> None:
        """The card has done its work: discard it (unless it stays on the table), end the turn."""
        if card >= 0:
            self._trash(card)
        self.pending = None
        if not self.over:
            self._end_turn()

    def _no_effect(self, p: dict[str, Any]) -> bool:
        """Favor cards and Counter-Spell: never a card in play (they are stacked or countered)."""
        return False

    # Fall From Grace, Infernal Inferno, Hex-O-Rama: discard cards from the top of the
    # target's stack, as many as STRIP prints (CC-5).
    def _effect_fall_from_grace(self, p: dict[str, Any]) -> bool:
        self._strip(p["target"], STRIP[FALL_FROM_GRACE])
        return False

    def _effect_infernal_inferno(self, p: dict[str, Any]) -> bool:
        self._strip(p["target"], STRIP[INFERNAL_INFERNO])
        return False

    def _effect_hex_o_rama(self, p: dict[str, Any]) -> bool:
        self._strip(p["target"], STRIP[HEX_O_RAMA])
        return False

    def _effect_beelze_beatdown(self, p: dict[str, Any]) -> bool:
        target = p["target"]
        self._strip(target, len(self.stacks[target]))
        return False

    def _effect_polymorphization(self, p: dict[str, Any]) -> bool:
        target = p["target"]
        if self.poly[target] < 0:
            self.poly[target] = p["card"]  # the marker; discarded when the turn is skipped (CC-3)
            self._end_turn()
            return True
        return False

    def _effect_toiling_trouble(self, p: dict[str, Any]) -> bool:
        if _pairs(self.kind, self.stacks[p["target"]]):
            self._ask("toil", p)
            return True
        return False

    def _legal_toil(self, seat: int, p: dict[str, Any]) -> list[int]:
        return [pair_action(i, j) for i, j in _pairs(self.kind, self.stacks[seat])]

    def _on_toil(self, p: dict[str, Any], action: int) -> None:
        _, i, j = decode(action)
        stack = self.stacks[p["target"]]
        self._trash(stack.pop(j))
        self._trash(stack.pop(i))
        self._finish(p["card"])

    def _effect_evil_eye(self, p: dict[str, Any]) -> bool:
        if self.hands[p["target"]]:
            self._ask("evil_eye", p)
            return True
        return False

    def _legal_evil_eye(self, seat: int, p: dict[str, Any]) -> list[int]:
        # CC-8: "may take": taking nothing is a choice too
        return [*_distinct(self.kind, self.hands[p["target"]], CHOOSE), TAKE_NOTHING]

    def _on_evil_eye(self, p: dict[str, Any], action: int) -> None:
        # CC-8: the player may take one card; which one stays between the two of them.
        player, target = p["player"], p["target"]
        if action == TAKE_NOTHING:
            self.emit(
                "take", player, "seat {} takes nothing from seat {}", player, target, target=target, count=0
            )
        else:
            # The rest of the table cannot tell which card moved: what they knew of that hand lapses.
            for s in range(self.num_players):
                if s not in (player, target):
                    self._forget(self.hands[target], only=s)
            card = self._take(self.hands[target], action - CHOOSE)
            self.hands[player].append(card)
            self._learn(target, (card,))  # the victim knows who holds its card now
            self.emit(
                "take", player, "seat {} takes a card from seat {}", player, target, target=target, count=1
            )
        self._learn(player, self.hands[target])
        self._finish(p["card"])

    def _effect_nerdronomicon(self, p: dict[str, Any]) -> bool:
        player = p["player"]
        for _ in range(NERDRONOMICON_LOOK):
            looked = draw(self.deck, self.discard, self.rng, self._refill_tags)
            if looked is not None:
                p["cards"].append(looked)
                self._drew(player, looked)
        self._forget(p["cards"], keep=player)  # which one it keeps is hidden from them
        if p["cards"]:
            self._ask("nerd_keep", p)
            return True
        return False

    def _legal_nerd_keep(self, seat: int, p: dict[str, Any]) -> list[int]:
        return _distinct(self.kind, p["cards"], CHOOSE)

    def _on_nerd_keep(self, p: dict[str, Any], action: int) -> None:
        cards = p["cards"]
        self.hands[p["player"]].append(self._take(cards, action - CHOOSE))
        if len(cards) == 2 and self.kind[cards[0]] != self.kind[cards[1]]:
            p["kind"] = "nerd_top"
            return
        self._learn(p["player"], cards)  # back on top, where only the player knows them
        self.deck.extend(cards)  # order among same-kind cards changes nothing
        p["cards"] = []
        self._finish(p["card"])

    def _legal_nerd_top(self, seat: int, p: dict[str, Any]) -> list[int]:
        return _distinct(self.kind, p["cards"], CHOOSE)

    def _on_nerd_top(self, p: dict[str, Any], action: int) -> None:
        cards = p["cards"]
        top = self._take(cards, action - CHOOSE)
        self._learn(p["player"], (cards[0], top))
        self.deck.extend((cards[0], top))
        p["cards"] = []
        self._finish(p["card"])

    def _effect_switcheroo(self, p: dict[str, Any]) -> bool:
        player, target = p["player"], p["target"]
        mine, theirs = self.stacks[player], self.stacks[target]
        if mine and theirs:
            mine[-1], theirs[-1] = theirs[-1], mine[-1]
            self._check_candle(player)
            if not self.over:
                self._check_candle(target)
        return False

    def _effect_dark_favor_4(self, p: dict[str, Any]) -> bool:
        self._add_favor(p["player"], p["card"])  # it stays, on the stack
        self._finish()
        return True

    def _effect_life_siphon(self, p: dict[str, Any]) -> bool:
        stack = self.stacks[p["target"]]
        if stack:
            self._add_favor(p["player"], stack.pop())
        return False

    def _effect_black_spire(self, p: dict[str, Any]) -> bool:
        spire = self.spire[p["target"]]
        if not spire:
            spire.append(p["card"])  # it stays, under the favor cards it gathers
            self._end_turn()
            return True
        return False

    def _effect_necromancy(self, p: dict[str, Any]) -> bool:
        if self.discard:
            self._ask("necro", p)
            return True
        return False

    def _legal_necro(self, seat: int, p: dict[str, Any]) -> list[int]:
        return _distinct(self.kind, self.discard, CHOOSE)

    def _on_necro(self, p: dict[str, Any], action: int) -> None:
        taken = self._take(self.discard, action - CHOOSE)
        self.hands[p["player"]].append(taken)
        for s in range(self.num_players):
            self._learn(s, (taken,))  # taken face up from a face-up pile
        self.emit(
            "take", p["player"], "seat {} takes {} from the discard", p["player"], TITLES[action - CHOOSE],
            card=_card(action - CHOOSE), zone="discard", count=1,
        )  # fmt: skip
        self._finish(p["card"])

    def _effect_dark_baptism(self, p: dict[str, Any]) -> bool:
        # CC-10: shielded until the start of its next regular turn; goes again at once.
        self.baptized[p["player"]] = True
        self.extra_turn = True
        return False

    def _effect_ouija(self, p: dict[str, Any]) -> bool:
        if self.hands[p["target"]]:
            self._ask("ouija", p)
            return True
        return False

    def _legal_ouija(self, seat: int, p: dict[str, Any]) -> list[int]:
        return [SWAP_HANDS, DISCARD_HAND, LEAVE_HAND]

    def _on_ouija(self, p: dict[str, Any], action: int) -> None:
        player, target = p["player"], p["target"]
        self._learn(player, self.hands[target])
        if action == SWAP_HANDS:
            self._learn(player, self.hands[player])  # its old hand, now the target's
            self._learn(target, self.hands[target])  # the target's old hand, now the player's
            self.hands[player], self.hands[target] = self.hands[target], self.hands[player]
        elif action == DISCARD_HAND:
            for c in self.hands[target]:
                self._trash(c)
            self.hands[target] = []
        self.emit("ouija", player, "seat {} chooses to {}", player, FIXED[action][1], choice=FIXED[action][0])
        self._finish(p["card"])

    def _effect_fear_the_reaper(self, p: dict[str, Any]) -> bool:
        player = p["player"]
        for t in range(self.num_players):
            if t != player:
                for c in self.hands[t]:
                    self._trash(c)
                self.hands[t] = []
        return False

    def _effect_puppet_master(self, p: dict[str, Any]) -> bool:
        # CC-10: every hand, the player's too, passes right (to seat - 1: G-1).
        for s in range(self.num_players):
            self._learn(s, self.hands[s])  # each seat knows the hand it passed on
        self.hands = self.hands[1:] + self.hands[:1]
        return False

    def _effect_forbidden_alchemy(self, p: dict[str, Any]) -> bool:
        player = p["player"]
        hand = self.hands[player]
        for _ in range(ALCHEMY_DRAW):
            drawn = draw(self.deck, self.discard, self.rng, self._refill_tags)
            if drawn is not None:
                hand.append(drawn)  # off the top: a seat that knew the card knows it is here
                self._drew(player, drawn)
        p["count"] = min(ALCHEMY_RETURN, len(hand))
        if p["count"]:
            self._ask("alchemy", p)
            return True
        return False

    def _legal_alchemy(self, seat: int, p: dict[str, Any]) -> list[int]:
        # "any 2 cards from your hand", Dark Powers too (each back to its own deck)
        return _distinct(self.kind, self.hands[seat], CHOOSE)

    def _on_alchemy(self, p: dict[str, Any], action: int) -> None:
        # Returned one at a time: the last returned is the new top card. A Dark Powers card
        # goes on top of the Dark Powers deck: the decks never mix (CC-10).
        player = p["player"]
        hand = self.hands[player]
        card = self._take(hand, action - CHOOSE)
        (self.deck if card < self.n_main else self.dark_deck).append(card)
        # Which card went back is hidden from the rest of the table: what they knew of the
        # hand (a card they had put on top and saw drawn into it, issue 16) lapses.
        self._forget((card, *hand), keep=player)
        self._learn(player, (card,))
        p["count"] -= 1
        if not p["count"]:
            self._finish(p["card"])

    def _effect_scrying_bones(self, p: dict[str, Any]) -> bool:
        if not self.deck:  # an exhausted deck is refilled from the discard (rulebook)
            self.deck.extend(self.discard)
            self.discard.clear()
        if self.deck:
            self._ask("scry", p)
            return True
        return False

    def _legal_scry(self, seat: int, p: dict[str, Any]) -> list[int]:
        return sorted(
            _distinct(self.kind, self.deck, CHOOSE)
        )  # in kind order: the deck's order is hidden (G-3)

    def _on_scry(self, p: dict[str, Any], action: int) -> None:
        player = p["player"]
        taken = self._take(self.deck, action - CHOOSE)
        self.hands[player].append(taken)
        self._forget((taken,))  # out of the deck: what any seat knew of it there lapses
        # "Show it to everyone then add it to your hand" (rulebook): the take is public, so
        # the log names it and every seat knows which card the player now holds (G-3).
        for s in range(self.num_players):
            self._learn(s, (taken,))
        self.shuffle_cards(self.deck, self._tags)  # the search saw the deck; its order is hidden again (G-3)
        in_deck = set(self.deck)
        for s in range(self.num_players):  # places in the deck are lost; contents stay known
            moved = [c for c in self.known[s] if c in in_deck]
            self._forget(moved, only=s)
            self._learn_deck(s, self.deck if s == player else moved)
        self.emit(
            "take", p["player"], "seat {} takes {} from the deck", p["player"], TITLES[action - CHOOSE],
            card=_card(action - CHOOSE), zone="deck", count=1,
        )  # fmt: skip
        self._finish(p["card"])

    def _effect_hail_yourself(self, p: dict[str, Any]) -> bool:
        if self._hail_seats(p["player"]):
            self._ask("hail", p)
            return True
        return False

    def _legal_hail(self, seat: int, p: dict[str, Any]) -> list[int]:
        kinds = self.kind
        return [
            a for s in self._hail_seats(seat) for a in _distinct(kinds, self.hands[s], TAKE + TAKE_ROOM * s)
        ]

    def _on_hail(self, p: dict[str, Any], action: int) -> None:
        # "All players must reveal their hands": every seat remembers what it saw; the
        # take is public by kind, so the record follows the card.
        for o in range(self.num_players):
            for t in range(self.num_players):
                if t not in (o, p["player"]):
                    self._learn(o, self.hands[t])
        _, k, seat = decode(action)
        taken = self._take(self.hands[seat], k)
        self.hands[p["player"]].append(taken)
        for o in range(self.num_players):
            self._learn(o, (taken,))  # taken by name from a hand the whole table saw
        self.emit(
            "take", p["player"], "seat {} takes {} from seat {}", p["player"], TITLES[k], seat,
            card=_card(k), target=seat, count=1,
        )  # fmt: skip
        self._finish(p["card"])

    # Voodoo asks its player for the extra discards before its window opens (`_on_voodoo`).
    def _effect_voodoo(self, p: dict[str, Any]) -> bool:
        self._strip(p["target"], p["count"])
        return False

    def _effect_heavy_metal(self, p: dict[str, Any]) -> bool:
        player = p["player"]
        for t in range(self.num_players):
            if t != player:
                self._strip(t, 1)
        return False

    # --- the draw-up's own question (CC-10) ----------------------------------------------
    def _legal_dark_draw(self, seat: int, p: dict[str, Any]) -> list[int]:
        return [TAKE_DARK, DRAW_MAIN]

    def _on_dark_draw(self, p: dict[str, Any], action: int) -> None:
        seat = p["player"]
        self.dark_due[seat] -= 1
        if action == TAKE_DARK:
            drawn = draw(self.dark_deck, self.dark_discard, self.rng, self._refill_tags)
            self.emit("dark", seat, "seat {} takes a Dark Powers card", seat)
        else:
            drawn = draw(self.deck, self.discard, self.rng, self._refill_tags)
        if drawn is not None:
            self.hands[seat].append(drawn)
            if action != TAKE_DARK:
                self._drew(seat, drawn)
        self.pending = None
        self._end_turn(p["count"])

    # --- stacks and candles (CC-4, CC-9, CC-10) -----------------------------------------
    def _add_favor(self, seat: int, card: int) -> None:
        """A favor card joins `seat`'s stack, or its Black Spire while one stands (CC-10)."""
        spire = self.spire[seat]
        if spire:
            spire.append(card)
            if _favor(self.kind, spire) >= self.config.black_spire_points:
                for c in spire:
                    self._trash(c)
                spire.clear()
                self.emit("spire", seat, "seat {}'s Black Spire falls", seat)
            return
        self.stacks[seat].append(card)
        self._check_candle(seat)

    def _check_candle(self, seat: int) -> None:
        """CC-4: checked whenever a stack grows, on any turn; variants per CC-9."""
        stack = self.stacks[seat]
        total = _favor(self.kind, stack)
        need = self.need(seat)
        if total < need:
            return
        for c in stack:
            self._trash(c)
        stack.clear()
        cfg = self.config
        if cfg.variant == "fiendish" and total > need:
            self.emit("overshoot", seat, "seat {} goes over {} and loses the stack", seat, need, count=need)
            return
        self.candles[seat] += 1
        if cfg.dark_powers:
            self.dark_due[seat] += 1
        self.emit(
            "candle", seat, "seat {} lights candle {}", seat, self.candles[seat], count=self.candles[seat]
        )
        if self.candles[seat] >= self.candles_to_win():
            self.winner = seat
            self.over = True
            self.pending = None
            self.emit("win", seat, "seat {} wins", seat)
            return
        if cfg.variant == "devilish":
            for t in range(self.num_players):
                self._strip(t, len(self.stacks[t]))

    def need(self, seat: int) -> int:
        """Favor points `seat` must stack for its next candle (CC-4; beast mode: CC-9)."""
        cfg = self.config
        if cfg.variant == "beast":
            return cfg.beast_threshold
        return cfg.threshold - self.candles[seat]

    def score_breakdown(self) -> list[tuple[float, dict[str, float]]]:
        """Candles lit against candles needed (CC-4), and the favor left on the stack."""
        kinds = self.kind
        goal = self.candles_to_win()
        return [
            (
                float(self.candles[s]),
                {
                    "candles": float(self.candles[s]),
                    "candles_to_win": float(goal),
                    "favor_on_stack": float(sum(VALUE[kinds[c]] for c in self.stacks[s])),
                },
            )
            for s in range(self.num_players)
        ]

    def candles_to_win(self) -> int:
        cfg = self.config
        return cfg.beast_candles_to_win if cfg.variant == "beast" else cfg.candles_to_win

    def _strip(self, seat: int, count: int) -> None:
        """Discard up to `count` cards from the top of a stack (never from a Spire: CC-10)."""
        stack = self.stacks[seat]
        for _ in range(min(count, len(stack))):
            self._trash(stack.pop())

    # --- end of turn: draw back up, next seat (CC-3, CC-7, CC-10, G-5) --------------------
    def _end_turn(self, first: int = 0) -> None:
        """Everyone draws back up to the hand limit, the active seat first, then the next turn.

        CC-7 asks for this after every Hijinx; after a favor only the active seat can be
        short, so doing it every turn is the same rule. A seat owed a Dark Powers draw is
        asked at its next main-deck draw (CC-10); `first` resumes after that question.
        """
        n = self.num_players
        limit = self._hand_limit
        active = self.active
        for step in range(first, n):
            seat = (active + step) % n
            hand = self.hands[seat]
            while len(hand) < limit:
                if self.dark_due[seat]:
                    if self.dark_deck or self.dark_discard:
                        record = _record("dark_draw", seat, -1, -1)
                        record["count"] = step
                        self.pending = record
                        return
                    # CC-10 offers the Dark card in place of this draw only: with both Dark
                    # piles empty there is nothing to offer, and the owed draws lapse.
                    self.dark_due[seat] = 0
                    self.emit("dark", seat, "seat {} finds no Dark Powers card to take", seat)
                drawn = draw(self.deck, self.discard, self.rng, self._refill_tags)
                if drawn is None:
                    break
                hand.append(drawn)
                self._drew(seat, drawn)
        if self.extra_turn:
            self.extra_turn = False
            self._start_turn(self.active, regular=False)
        else:
            self._start_turn((self.active + 1) % n, regular=True)

    def _start_turn(self, seat: int, regular: bool) -> None:
        """Begin the next turn; Polymorphization skips need no decision (CC-3)."""
        n = self.num_players
        while True:
            if self.turn >= self._max_turns:  # G-5: a draw
                self.over = True
                self.emit("capped", -1, "turn cap {} reached: no winner", self.config.max_turns)
                return
            self.turn += 1
            self.active = seat
            if regular:
                self.baptized[seat] = False
            if self.poly[seat] < 0:
                return
            self._trash(self.poly[seat])
            self.poly[seat] = -1
            self.emit("skip", seat, "seat {} is polymorphed and skips its turn", seat)
            seat = (seat + 1) % n
            regular = True

    # --- card movement ------------------------------------------------------------------
    def _take(self, zone: list[int], k: int) -> int:
        """Remove and return the last card of kind `k` in `zone` (same-kind cards are alike)."""
        i = _last_of(zone, self.kind, k)
        if i < 0:
            raise BadState(f"no {NAMES[k]} where one was expected")
        return zone.pop(i)

    def _trash(self, card: int) -> None:
        """Into its own deck's discard pile: Dark Powers keep theirs apart (CC-10)."""
        self._forget((card,))
        if card < self.n_main:
            self.discard.append(card)
        else:
            self.dark_discard.append(card)

    # --- what each seat knows of hidden cards (issue 16) --------------------------------
    def _learn(self, seat: int, cards: Any) -> None:
        """`seat` now knows exactly where `cards` lie (a hand, or the top of a deck)."""
        record = self.known[seat]
        for c in cards:
            if c not in record:
                record.append(c)

    def _learn_deck(self, seat: int, cards: Any) -> None:
        """`seat` knows `cards` are in the main deck, not where (after a search)."""
        record = self.known_deck[seat]
        for c in cards:
            if c not in record:
                record.append(c)

    def _forget(self, cards: Any, keep: int = -1, only: int = -1) -> None:
        """`cards` moved out of sight (or into plain view): drop them from the records of
        every seat but `keep`, or of seat `only`."""
        # On the path of nearly every card that moves: an empty record, or one holding none
        # of the cards, is left as it is (the two kinds of record are independent).
        _forget_in(self.known, cards, keep, only, self.num_players)
        _forget_in(self.known_deck, cards, keep, only, self.num_players)

    def _drew(self, seat: int, card: int) -> None:
        """`seat` drew `card` from the main deck. It saw its card leave; a seat that knew only
        the deck's contents cannot tell which card went, so all it knew of the deck lapses
        (keeping the rest would tell it which card was drawn)."""
        for s, record in enumerate(self.known_deck):
            if record:
                if s != seat:
                    record.clear()
                elif card in record:
                    record.remove(card)

    # --- what a seat may see (G-3) ------------------------------------------------------
    def view(self, seat: int | None) -> dict[str, Any]:
        kinds = self.kind
        players = []
        for s in range(self.num_players):
            stack, spire = self.stacks[s], self.spire[s]
            players.append(
                {
                    "seat": s,
                    "hand_size": len(self.hands[s]),
                    "stack": [NAMES[kinds[c]] for c in stack],
                    "stack_total": sum(VALUE[kinds[c]] for c in stack),
                    "need": self.need(s),
                    "candles": self.candles[s],
                    "polymorphed": self.poly[s] >= 0,
                    "spired": bool(spire),
                    "spire": [NAMES[kinds[c]] for c in spire[1:]],
                    "spire_total": sum(VALUE[kinds[c]] for c in spire),
                    "baptized": self.baptized[s],
                    "dark_due": self.dark_due[s],
                }
            )
        return {
            "seat": -1 if seat is None else seat,
            "active": self.active,
            "turn": self.turn,
            "hand": [] if seat is None else [NAMES[kinds[c]] for c in self.hands[seat]],
            "players": players,
            "deck_size": len(self.deck),
            "discard": self._counts(self.discard),
            "discard_top": NAMES[kinds[self.discard[-1]]] if self.discard else "",
            "dark_deck_size": len(self.dark_deck),
            "dark_discard": self._counts(self.dark_discard),
            "pending": self._pending_view(seat),
            "candles_to_win": self.candles_to_win(),
            "variant": self.config.variant,
            "winner": self.winner,
            "over": self.over,
        }

    def _counts(self, zone: list[int]) -> dict[str, int]:
        kinds = self.kind
        out: dict[str, int] = {}
        for c in zone:
            name = NAMES[kinds[c]]
            out[name] = out.get(name, 0) + 1
        return out

    def _pending_view(self, seat: int | None) -> dict[str, Any] | None:
        p = self.pending
        if p is None:
            return None
        kinds = self.kind
        what = p["kind"]
        looking: list[str] = []
        revealed: list[dict[str, Any]] = []
        shows = DECISIONS[what]["shows"]
        if seat is not None and seat == p["player"]:
            if shows == "target_hand":  # CC-8: shown to the player only
                t = p["target"]
                revealed.append({"seat": t, "cards": [NAMES[kinds[c]] for c in self.hands[t]]})
            elif shows == "looked":
                looking = [NAMES[kinds[c]] for c in p["cards"]]
            elif shows == "deck":  # the contents, never the order (G-3)
                looking = sorted(NAMES[kinds[c]] for c in self.deck)
        if shows == "hands":  # "All players must reveal their hands": to the whole table
            revealed = [
                {"seat": t, "cards": [NAMES[kinds[c]] for c in self.hands[t]]}
                for t in range(self.num_players)
                if t != p["player"]
            ]
        return {
            "kind": what,
            "seat": self._decider(),
            "player": p["player"],
            "target": p["target"],
            "card": NAMES[kinds[p["card"]]] if p["card"] >= 0 else "",
            "count": p["count"],
            "counters": len(p["chain"]),
            "asked": list(p["asked"]),
            "looking": looking,
            "revealed": revealed,
        }

    # --- words for actions ----------------------------------------------------------------
    def action_label(self, action: int) -> str:
        family, k, seat = decode(action)
        if family == "play":
            return f"play {TITLES[k]}" if seat < 0 else f"play {TITLES[k]} on seat {seat}"
        if family == "discard":
            return f"discard {TITLES[k]}"
        if family == "choose":
            words = DECISIONS[self.pending["kind"]]["words"] if self.pending else ""
            return (words or "choose {}").format(TITLES[k])
        if family == "take":
            return f"take {TITLES[k]} from seat {seat}"
        if family == "pair":
            words = f"discard the pair at stack positions {k + 1} and {seat + 1}"
            p = self.pending
            if p is not None and p["kind"] == "toil" and seat < len(self.stacks[p["target"]]):
                value = VALUE[self.kind[self.stacks[p["target"]][seat]]]
                words = f"discard the pair of {value}s at stack positions {k + 1} and {seat + 1}"
            return words
        if family in ("unknown",):
            return f"unknown action {action}"
        return FIXED[action][1]

    def action_detail(self, action: int) -> dict[str, Any]:
        family, k, seat = decode(action)
        if family in ("play", "take"):
            detail: dict[str, Any] = {"kind": family, "card": NAMES[k]}
            if seat >= 0:
                detail["target"] = seat
            return detail
        if family in ("discard", "choose"):
            return {"kind": family, "card": NAMES[k]}
        if family == "pair":
            return {"kind": family, "positions": [k, seat]}
        return {"kind": family}

    def action_text_key(self, action: int) -> Hashable | None:
        """An action's words come from its id alone, except a choice's (worded by the decision
        pending) and a pair's (which names the value of the cards at those positions)."""
        if CHOOSE <= action < CHOOSE + NUM_KINDS or action >= PAIR:
            return None
        return action

    # --- consistency of a restored state -------------------------------------------------
    def check_invariants(self) -> None:
        """Refuse any position the rules could not have produced (tampered or corrupt bytes).

        Shapes and types first, then every card in exactly one place, then what each zone
        may hold, then the pending decision and whoever must answer it.
        """
        self._derive()  # from_json asks this of a state built without __init__: the table first
        self._check_shapes()
        p = self.pending
        zones = [self.deck, self.discard, self.dark_deck, self.dark_discard, *self.hands, *self.stacks]
        zones += [*self.spire, [c for c in self.poly if c >= 0]]
        if p is not None:
            if type(p) is not dict or set(p) != PENDING_KEYS:
                raise BadState(f"pending must be a record with keys {sorted(PENDING_KEYS)}")
            if type(p["chain"]) is not list or type(p["cards"]) is not list or type(p["card"]) is not int:
                raise BadState("pending chain and cards must be lists of cards, card a card")
            zones += [p["chain"], p["cards"], [p["card"]] if p["card"] >= 0 else []]
        if not set(map(type, chain.from_iterable(zones))) <= {int}:
            raise BadState("card ids must be whole numbers")
        check_conservation(zones, len(self.kind))
        self._check_zones()
        if p is not None:
            self._check_pending(p)
        if self.over:
            if p is not None:
                raise BadState("a finished game has a pending decision")
        else:
            if self.poly[self.active] >= 0:
                raise BadState("the active seat is polymorphed: its turn should have been skipped")
            if not self.legal_actions(self._decider()):
                raise BadState("the seat asked to decide has no legal action")

    def _check_shapes(self) -> None:
        n = self.num_players
        if n == 2 and not self.config.two_players:
            raise BadState("a 2-player game needs the config's two_players variant (CC-2)")
        for name in ("deck", "discard", "dark_deck", "dark_discard"):
            if type(getattr(self, name)) is not list:
                raise BadState(f"{name} must be a list of cards")
        for name in ("hands", "stacks", "spire"):
            zones = getattr(self, name)
            if type(zones) is not list or len(zones) != n or {type(z) for z in zones} != {list}:
                raise BadState(f"{name} must be a list of {n} lists of cards")
        for name, kind in (("candles", int), ("poly", int), ("dark_due", int), ("baptized", bool)):
            values = getattr(self, name)
            if type(values) is not list or len(values) != n or {type(v) for v in values} != {kind}:
                raise BadState(f"{name} must be a list of {n} {kind.__name__}s")
        for name, top in (("known", len(self.kind)), ("known_deck", self.n_main)):
            records = getattr(self, name)
            if type(records) is not list or len(records) != n or {type(r) for r in records} != {list}:
                raise BadState(f"{name} must be a list of {n} lists of cards")
            for r in records:
                if any(type(c) is not int or not 0 <= c < top for c in r) or len(set(r)) != len(r):
                    raise BadState(f"{name} must list distinct cards below {top}, got {r!r}")
        for name, kind in (("active", int), ("winner", int), ("extra_turn", bool), ("over", bool)):
            if type(getattr(self, name)) is not kind:
                raise BadState(f"{name} must be a {kind.__name__}")
        if not 0 <= self.active < n or not -1 <= self.winner < n:
            raise BadState(f"active {self.active} / winner {self.winner} is not a seat")
        if not 0 <= self.turn <= self.config.max_turns:
            raise BadState(f"turn {self.turn} is outside 0..{self.config.max_turns}")

    def _check_zones(self) -> None:
        """What each zone may hold; card ids are known to be valid and unique here."""
        cfg = self.config
        kinds, n_main = self.kind, self.n_main
        if (self.deck and max(self.deck) >= n_main) or (self.discard and max(self.discard) >= n_main):
            raise BadState("a Dark Powers card is in the main deck or its discard")
        if (self.dark_deck and min(self.dark_deck) < n_main) or (
            self.dark_discard and min(self.dark_discard) < n_main
        ):
            raise BadState("a main-deck card is in the Dark Powers deck or its discard")
        to_win = self.candles_to_win()
        for s in range(self.num_players):
            values = [VALUE[kinds[c]] for c in self.stacks[s]]
            if 0 in values:
                raise BadState(f"seat {s}'s stack holds a card that is not a favor card")
            if values and sum(values) >= self.need(s):
                raise BadState(f"seat {s}'s stack reached its candle threshold without a candle")
            spire = self.spire[s]
            if spire:
                values = [VALUE[kinds[c]] for c in spire[1:]]
                if kinds[spire[0]] != BLACK_SPIRE or 0 in values or sum(values) >= cfg.black_spire_points:
                    raise BadState(f"seat {s}'s Black Spire is not a Spire under {cfg.black_spire_points}")
            if self.poly[s] >= 0 and kinds[self.poly[s]] != POLYMORPHIZATION:
                raise BadState(f"seat {s}'s Polymorphization marker is not a Polymorphization card")
            if not 0 <= self.candles[s] <= to_win or (self.candles[s] == to_win and self.winner != s):
                raise BadState(f"seat {s} has {self.candles[s]} candles")
            if self.dark_due[s] < 0 or (self.dark_due[s] and not cfg.dark_powers):
                raise BadState(f"seat {s} is owed {self.dark_due[s]} Dark Powers draws")
            room = cfg.hand_limit
            p = self.pending
            if p is not None and p["kind"] == "alchemy" and p["player"] == s:
                room += ALCHEMY_DRAW - 1  # drawn 3 after playing it, not yet returned 2
            if len(self.hands[s]) > room:
                raise BadState(f"seat {s} holds {len(self.hands[s])} cards, more than {room}")
        if self.winner >= 0 and (not self.over or self.candles[self.winner] < to_win):
            raise BadState(f"seat {self.winner} is the winner without enough candles or a finished game")

    def _check_pending(self, p: dict[str, Any]) -> None:
        n = self.num_players
        kinds = self.kind
        what = p["kind"]
        if what not in DECISIONS:
            raise BadState(f"unknown pending decision {what!r}")
        for key in ("player", "target", "count"):
            if type(p[key]) is not int:
                raise BadState(f"pending {key} must be a whole number")
        if type(p["asked"]) is not list or {type(s) for s in p["asked"]} - {int}:
            raise BadState("pending asked must be a list of seats")
        player, target, card = p["player"], p["target"], p["card"]
        if not 0 <= player < n:
            raise BadState(f"pending player {player} is not a seat")
        if what == "dark_draw":
            if card != -1 or target != -1 or p["chain"] or p["asked"] or p["cards"]:
                raise BadState("a Dark Powers draw has no card, target, chain or cards")
            if not 0 <= p["count"] < n or (self.active + p["count"]) % n != player:
                raise BadState("the Dark Powers draw does not match the draw-up order")
            if not self.dark_due[player] or len(self.hands[player]) >= self.config.hand_limit:
                raise BadState("a Dark Powers draw is asked of a seat that is not owed one")
            return
        if player != self.active:
            raise BadState("only the active seat has a card in play")
        if card < 0:
            raise BadState(f"{what} needs a card in play")
        k = kinds[card]
        if k in MAIN_FAVORS or k == COUNTER_SPELL:
            raise BadState(f"{NAMES[k]} is never a card in play")
        if DECISIONS[what]["card"] >= 0 and DECISIONS[what]["card"] != k:
            raise BadState(f"a {what} decision with {NAMES[k]} in play")
        if k in TARGETED:
            if not 0 <= target < n or target == player:
                raise BadState(f"{NAMES[k]} needs another seat as its target, not {target}")
        elif target != -1:
            raise BadState(f"{NAMES[k]} has no target")
        if what == "counter":
            asked = p["asked"]
            if not asked or len(set(asked)) != len(asked) or any(not 0 <= s < n for s in asked):
                raise BadState("the Counter-Spell window must ask distinct seats")
            if any(kinds[c] != COUNTER_SPELL for c in p["chain"]):
                raise BadState("only Counter-Spells go into the chain")
        elif p["chain"] or p["asked"]:
            raise BadState("only the Counter-Spell window has a chain and seats to ask")
        if k == VOODOO:
            low, high = 1, self.config.hand_limit
        elif what == "alchemy":
            low, high = 1, ALCHEMY_RETURN
        else:
            low = high = 0
        if not low <= p["count"] <= high:
            raise BadState(f"pending count {p['count']} is outside {low}..{high} for {what}")
        low, high = DECISIONS[what]["looked"]
        if not low <= len(p["cards"]) <= high or any(c >= self.n_main for c in p["cards"]):
            raise BadState(f"{what} holds {len(p['cards'])} looked-at cards")

    # --- hidden information (G-3) --------------------------------------------------------
    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Re-deal what `observer` cannot see: other hands, the decks, cards only others saw.

        Main-deck and Dark Powers cards are pooled apart, and each hand keeps its number of
        each (the table saw who drew Dark Powers), so every public fact stays. Cards the
        observer remembers (`known`: an Evil Eye'd hand, the top cards it put back) stay
        where they are; the cards it knows are in the deck (`known_deck`, after a search)
        stay in the deck, in a new order.
        """
        n_main = self.n_main
        p = self.pending or _record("", -1, -1, -1)
        shows, player = DECISIONS[p["kind"]]["shows"] if p["kind"] else "", p["player"]
        shown = {observer}
        if shows == "hands":
            shown.update(t for t in range(self.num_players) if t != player)
        elif shows == "target_hand" and player == observer:
            shown.add(p["target"])
        fixed = set(self.known[observer])
        in_deck = set(self.known_deck[observer])
        if shows == "deck" and player == observer:
            in_deck.update(self.deck)  # it sees what is in the deck now, not the order
        hidden = [s for s in range(self.num_players) if s not in shown]
        mains = [[c for c in self.hands[s] if c < n_main] for s in hidden]
        darks = [[c for c in self.hands[s] if c >= n_main] for s in hidden]
        deck = self.deck
        if in_deck:
            shuffle_in_place(deck, in_deck - fixed, rng)
            fixed = fixed | in_deck
        main_zones = [*mains, deck]
        if shows == "looked" and player != observer:
            main_zones.append(p["cards"])
        redeal_keeping(main_zones, fixed, rng)
        redeal_keeping([*darks, self.dark_deck], fixed, rng)
        for s, m, d in zip(hidden, mains, darks, strict=True):
            self.hands[s] = sorted(m + d)  # so where a known card lay in it tells nothing


# Each card kind's effect, and each decision's handler and legal actions, found by name in
# the class (the methods `_effect_<card name>`, `_on_<decision>`, `_legal_<decision>`): a
# card without an effect of its own (a favor card, Counter-Spell) is never a card in play.
# A decision without a handler, or an effect method no card is named for, fails here, at
# import.
_EFFECTS = tuple(
    getattr(CrazyCultistsState, "_effect_" + name, CrazyCultistsState._no_effect) for name in NAMES
)
_ON = {what: getattr(CrazyCultistsState, "_on_" + what) for what in DECISIONS}
_LEGAL = {what: getattr(CrazyCultistsState, "_legal_" + what) for what in DECISIONS if what != "counter"}
_unnamed = {n for n in dir(CrazyCultistsState) if n.startswith("_effect_")} - {"_effect_" + n for n in NAMES}
if _unnamed:
    raise ImportError(f"effects named for no card kind: {sorted(_unnamed)}")


# Compiled, the names rules.pxd declares `cdef` at module level are C variables, not
# attributes of the module; they are published here again, so `rules.PLAY` or
# `rules.POLYMORPHIZATION` reads compiled as it does from source (tests/core/test_compiled.py
# checks this call against the .pxd's declarations, and the built module against the source).
globals().update(
    NO_TARGET=NO_TARGET,
    PLAY_ROOM=PLAY_ROOM,
    PLAY=PLAY,
    BEELZE_BEATDOWN=BEELZE_BEATDOWN,
    BLACK_SPIRE=BLACK_SPIRE,
    COUNTER_SPELL=COUNTER_SPELL,
    DARK_BAPTISM=DARK_BAPTISM,
    DARK_FAVOR_4=DARK_FAVOR_4,
    EVIL_EYE=EVIL_EYE,
    FEAR_THE_REAPER=FEAR_THE_REAPER,
    FORBIDDEN_ALCHEMY=FORBIDDEN_ALCHEMY,
    HAIL_YOURSELF=HAIL_YOURSELF,
    HEAVY_METAL=HEAVY_METAL,
    LIFE_SIPHON=LIFE_SIPHON,
    NECROMANCY=NECROMANCY,
    NERDRONOMICON=NERDRONOMICON,
    OUIJA=OUIJA,
    POLYMORPHIZATION=POLYMORPHIZATION,
    PUPPET_MASTER=PUPPET_MASTER,
    SCRYING_BONES=SCRYING_BONES,
    SWITCHEROO=SWITCHEROO,
    TOILING_TROUBLE=TOILING_TROUBLE,
    VOODOO=VOODOO,
    VALUE=VALUE,
)
