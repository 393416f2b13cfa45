"""Trash Cult: a 2-4 player tableau race to fill your Shrine with the food your cult worships.

A turn is a draw step (TC-4) and exactly two actions (TC-5): add a card to your cult,
Snackrifice cards in play for a perk, play an action card, or discard. A Snackrifice opens
a Protection Spell window, uses the perk, and reveals a chaos card that every seat either
Hides from or resolves (TC-9). A player wins only at the end of their own turn (TC-17).

Every choice, on turn or off, is a decision of one seat (G-4). A multi-step effect lives
in `pending`, one JSON record naming the seat asked now (docs/games/trash_cult.md):

    {"step": "cult",    "seat"}                                   pick a cult (TC-2)
    {"step": "protect", "seat", "event", "perk", "target"}        Protection Spell window (TC-10)
    {"step": "perk",    "seat", "perk", "event"}                  the perk's choice (TC-8)
    {"step": "chaos",   "seat", "card", "hiders", "want", "left"} Hide or resolve (TC-9, TC-11)
    {"step": "steal",   "seat", "card", "victim"}                 play the stolen card? (TC-13)

Out-of-turn questions go to every eligible seat whether or not it holds the card (a seat
without it is offered only "let it happen" or "resolve"), so who is asked never reveals a
hand (G-3).
Cards of one kind are interchangeable, so actions name kinds, not card ids: one action per
distinct choice, and a label that says what it does.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, ClassVar, cast

from ..core.decks import check_conservation, draw, kind_counts, redeal_keeping, shuffle_in_place
from ..core.errors import BadConfig, BadState
from ..core.game import FISHER_YATES, State
from ..core.rng import Rng, card_tags
from .cards import (
    ACTIVE_KINDS,
    ANIMAL_CONTROL,
    CONVERT_HOSTAGE,
    CULT_BY_NAME,
    CULTS,
    EITHER_OR,
    FOOD,
    GARBAGE_TRUCKS,
    HIDE,
    KIND_NAMES,
    LUNAR_ECLIPSE,
    OPOSSUM_PLUSHIE,
    PERKS,
    PIGEON_THIEF,
    POISON_THEIR_PUNCH,
    PROTECTION_SPELL,
    RACCOON,
    RAT,
    SKUNK,
    SQUIRREL,
    THUNDERSTORM,
    TRASH_SWAP,
    TRASHNADO,
)
from .config import TrashCultConfig

# --- actions: an id is a family's base plus an argument ---------------------------------
# (name, argument kind, size). Bases follow in this order, so ids are 0..N_ACTIONS-1.
FAMILIES = (
    ("add", "card", 8),  # TC-6: animal or food kind from hand
    ("snackrifice_member", "card", 4),  # TC-7: animal kind of the Cult Member paid
    ("snackrifice_hostages", "card", 4),  # TC-7: animal kind of the two Hostages paid
    ("snackrifice_food", "cult", 4),  # TC-7: cult whose food is paid, two cards
    ("convert_hostage", "card", 4),  # TC-15: animal kind of the Hostage converted
    ("opossum_plushie", "cult", 4),  # TC-12: cult whose perk is used
    ("pigeon_thief", "seat", 4),  # TC-13: seat robbed
    ("poison_their_punch", "seat", 4),  # TC-14: seat poisoned
    ("discard", "card", ACTIVE_KINDS),  # TC-16: kind discarded
    ("pass", "", 1),  # TC-5: only when nothing else is legal
    ("keep", "", 1),  # TC-13: keep the stolen card instead of playing it
    ("pick_cult", "cult", 4),  # TC-2
    ("protection_spell", "", 1),  # TC-10
    ("no_protection", "", 1),
    ("perk_target", "seat", 4),  # TC-8: opponent robbed by the Raccoon or Skunk perk
    ("search_take", "card", ACTIVE_KINDS),  # TC-8: kind taken by the Squirrel perk
    ("hide", "", 1),  # TC-9
    ("resolve", "", 1),
    ("lose_animals", "", 1),  # TC-11: the either/or options
    ("lose_food", "", 1),
    ("trash_member", "card", 4),  # TC-11: animal kind of the Cult Member trashed
    ("trash_hostage", "card", 4),
    ("trash_food", "cult", 4),  # cult whose food is trashed
)
_BASES = [0]
for _name, _arg, _size in FAMILIES:
    _BASES.append(_BASES[-1] + _size)
(
    ADD,
    SNACK_MEMBER,
    SNACK_HOSTAGES,
    SNACK_FOOD,
    CONVERT,
    PLUSHIE,
    PIGEON,
    POISON,
    DISCARD,
    PASS,
    KEEP,
    PICK,
    PROTECT,
    NO_PROTECT,
    TARGET,
    TAKE,
    HIDE_ACT,
    RESOLVE,
    LOSE_ANIMALS,
    LOSE_FOOD,
    TRASH_MEMBER,
    TRASH_HOSTAGE,
    TRASH_FOOD,
    N_ACTIONS,
) = _BASES
# Action id -> (family index, argument).
DECODE = tuple((f, a) for f, (_n, _k, size) in enumerate(FAMILIES) for a in range(size))

STEPS = {
    "cult": {"step", "seat"},
    "protect": {"step", "seat", "event", "perk", "target"},
    "perk": {"step", "seat", "perk", "event"},
    "chaos": {"step", "seat", "card", "hiders", "want", "left"},
    "steal": {"step", "seat", "card", "victim"},
}
PROTECTED_EVENTS = ("snackrifice", "plushie", "poison")  # TC-10


def family(action: int) -> str:
    """The family name of an action id, e.g. "add" (bots and tests read actions through it)."""
    return FAMILIES[DECODE[action][0]][0]


def argument(action: int) -> int:
    """The family's argument: a card kind, a cult or a seat (FAMILIES says which)."""
    return DECODE[action][1]


def _ids(base: int, width: int) -> tuple[tuple[int, ...], ...]:
    """Per mask of `width` bits, the ids `base + k` of its set bits `k`, in order: the actions
    a set of kinds allows, looked up instead of built on the most asked question of the game."""
    return tuple(tuple(base + k for k in range(width) if m >> k & 1) for m in range(1 << width))


# Bit k of a zone's kind mask: the zone holds a card of kind k. The main actions read the
# hand's mask in three pieces: animals and food (TC-6), the action cards (TC-12..TC-15,
# all below Protection Spell), and every active kind again for the discards (TC-16).
# As lists (never handed out: each legal list starts as a slice of one, the cheapest copy).
_ADDS = tuple(list(ids) for ids in _ids(ADD, FOOD + 4))
_DISCARDS_LOW = _ids(DISCARD, 8)
_DISCARDS_HIGH = _ids(DISCARD + 8, ACTIVE_KINDS - 8)
_TAKES_LOW = _ids(TAKE, 8)  # TC-8: the Squirrel perk's search, per kind in the deck
_TAKES_HIGH = _ids(TAKE + 8, ACTIVE_KINDS - 8)
_ACTION_CARDS = (1 << PROTECTION_SPELL) - (1 << PIGEON_THIEF)
_PIGEON_BIT = 1 << PIGEON_THIEF
_POISON_BIT = 1 << POISON_THEIR_PUNCH
_PLUSHIE_BIT = 1 << OPOSSUM_PLUSHIE
_CONVERT_BIT = 1 << CONVERT_HOSTAGE
_SNACK_MEMBERS = _ids(SNACK_MEMBER, 4)  # per mask of the members' animal kinds
_SNACK_HOSTAGES = _ids(SNACK_HOSTAGES, 4)  # per mask of the animal kinds paid in pairs
_SNACK_FOODS = _ids(SNACK_FOOD, 4)  # per mask of the cults whose food is paid in pairs
_CONVERTS = _ids(CONVERT, 4)  # per mask of the Hostages' animal kinds
# TC-11's trash choices, per mask of the animal kinds among members / Hostages, and of the
# cults whose food is in the Shrine or Stash.
_TRASH_MEMBERS = _ids(TRASH_MEMBER, 4)
_TRASH_HOSTAGES = _ids(TRASH_HOSTAGE, 4)
_TRASH_FOODS = _ids(TRASH_FOOD, 4)
_PLUSHIES = tuple(range(PLUSHIE, PLUSHIE + 4))
# Poison Their Punch's targets by player count and poisoner: every other seat.
_POISONS = tuple(tuple(tuple(POISON + t for t in range(n) if t != s) for s in range(n)) for n in range(5))


# Each card kind as every game's events name a card (`Card`): its printed name, which is
# also its id here (the action details name cards the same way). Made once: an event's
# payload is built even where nobody listens (simulations), so it must cost a lookup.
_CARDS = tuple({"id": name, "name": name} for name in KIND_NAMES)


def _card(kind: int) -> dict[str, str]:
    return _CARDS[kind]


def _kind_mask(zone: list[int], kinds: bytes) -> int:
    """Bit k set: `zone` holds a card of kind k (rules.pxd types it: a C loop when built)."""
    mask = 0
    for c in zone:
        k = kinds[c]
        mask |= 1 << k
    return mask


def _kinds_with(zone: list[int], kinds: bytes, offset: int, least: int) -> int:
    """Bit k set: `zone` holds at least `least` cards of kind `offset + k`, k in 0..3 (the
    four animals or the four foods; rules.pxd types it)."""
    n0 = n1 = n2 = n3 = 0
    for c in zone:
        k = kinds[c]  # a C integer when built, before any arithmetic on it
        k -= offset
        if k == 0:
            n0 += 1
        elif k == 1:
            n1 += 1
        elif k == 2:
            n2 += 1
        elif k == 3:
            n3 += 1
    return (n0 >= least) | (n1 >= least) << 1 | (n2 >= least) << 2 | (n3 >= least) << 3


def _last_of(zone: list[int], kinds: bytes, kind: int) -> int:
    """Index of the last card of `kind` in `zone`, -1 if it holds none (typed in rules.pxd:
    finding the card to take is on the path of most actions)."""
    for i in range(len(zone) - 1, -1, -1):
        c = zone[i]
        k = kinds[c]  # a C integer when built: compared in C, not as Python ints
        if k == kind:
            return i
    return -1


def _forget_in(records: list[list[int]], cards: Any, only: int) -> None:
    """Drop `cards` from each seat's record (or seat `only`'s). On the path of nearly every
    card that moves: an empty record, or one holding none of the cards, is left as it is."""
    for s in range(len(records)):
        record = records[s]
        if record and (only < 0 or s == only):
            for card in cards:
                if card in record:  # most moves touch no record: leave it be
                    record.remove(card)  # a record lists distinct cards


def _card_plays(
    acts: list[int], held: int, s: int, hands: list[list[int]], hostages: list[int], kinds: bytes
) -> None:
    """Append seat `s`'s ways to play the action cards (TC-12..TC-15) whose kinds are set in
    `held`, in kind order: the one statement of those plays, for the main actions (every
    kind held) and for a stolen card's free play (its kind alone)."""
    n = len(hands)
    if held & _PIGEON_BIT:  # robbing an empty hand would take nothing
        for t in range(n):
            if t != s and hands[t]:
                acts.append(PIGEON + t)
    if held & _POISON_BIT:
        acts.extend(_POISONS[n][s])
    if held & _PLUSHIE_BIT:
        acts.extend(_PLUSHIES)
    if held & _CONVERT_BIT:
        acts.extend(_CONVERTS[_kind_mask(hostages, kinds) & 15])


def _main_actions_of(
    s: int,
    hands: list[list[int]],
    members: list[int],
    hostages: list[int],
    shrine: list[int],
    stash: list[int],
    cult: int,
    kinds: bytes,
    hostage_cost: int,
    food_cost: int,
) -> list[int]:
    """Seat `s`'s main actions (TC-5), from its zones: the most asked question of the game,
    asked twice per decision (apply checks it). A module-level function so rules.pxd can
    type it (masks in C integers when built). The kinds a zone holds are one mask, and each
    mask's actions come from a table, in the kinds' order: plays of a card from hand,
    Snackrifices, discards."""
    held = _kind_mask(hands[s], kinds)
    adds = _ADDS[held & 255]  # TC-6: animals and food
    acts = adds[:]
    if held & _ACTION_CARDS:  # TC-12..TC-15
        _card_plays(acts, held, s, hands, hostages, kinds)
    # TC-7: one Cult Member, two like Hostages, or two like food. TC-6 placed them: members
    # and Hostages are animals, the Shrine holds only the cult's own food and the Stash
    # only other cults' food.
    if members:
        acts.extend(_SNACK_MEMBERS[_kind_mask(members, kinds) & 15])
    if len(hostages) >= hostage_cost:
        acts.extend(_SNACK_HOSTAGES[_kinds_with(hostages, kinds, 0, hostage_cost)])
    if len(shrine) + len(stash) >= food_cost:
        foods = _kinds_with(stash, kinds, FOOD, food_cost)
        if len(shrine) >= food_cost:
            foods |= 1 << cult
        acts.extend(_SNACK_FOODS[foods])
    acts.extend(_DISCARDS_LOW[held & 255])  # TC-16
    acts.extend(_DISCARDS_HIGH[held >> 8 & 63])
    return acts if acts else [PASS]  # TC-5


@functools.cache
def _printed_decks() -> tuple[dict[int, int], dict[int, int]]:
    """The printed rules' active and chaos decks as kind -> copies: what a keyed deal is
    coupled with, so that every config a sweep compares deals like the printed one."""
    counts = kind_counts(TrashCultConfig().kinds)
    return (
        {k: n for k, n in counts.items() if k < ACTIVE_KINDS},
        {k: n for k, n in counts.items() if k >= ACTIVE_KINDS},
    )


class TrashCultState(State):
    # Older documents (before issue 16) lack what seats remember: nothing remembered.
    ADDED_FIELDS = {
        "known": lambda doc, players: [[] for _ in range(players)],
        "known_deck": lambda doc, players: [[] for _ in range(players)],
    }
    KEYED_DEALS = True  # every shuffle goes through shuffle_cards / deal_cards
    FIELDS: ClassVar[tuple[str, ...]] = (
        "deck",  # active deck, top at the end (hidden)
        "trash",  # trash pile, face up (TC-16)
        "chaos_deck",
        "chaos_discard",
        "cult",  # per seat: 0..3 (cards.CULTS), -1 until picked
        "hands",
        "members",  # per seat: Cult Member animal ids
        "tucked",  # per seat, parallel to members: its Convert Hostage id, -1 if natural
        "hostages",
        "shrine",
        "stash",
        "active",
        "actions_left",
        "pending",
        "winner",  # -1 until someone wins
        "over",
        # What each seat knows of cards it cannot see (G-3, issue 16): ids it knows are in
        # another hand (a card stolen from it, the hand it passed in a Trash Swap), and
        # cards it knows are in the active deck after a Squirrel search, order unknown.
        "known",
        "known_deck",
    )
    config: TrashCultConfig

    def __init__(
        self,
        config: TrashCultConfig,
        num_players: int,
        seed: int,
        deal_key: bytes | None = None,
        shuffle: int = FISHER_YATES,
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        n = num_players
        if config.cults and len(config.cults) != n:
            raise BadConfig(f"cults names {len(config.cults)} cults for {n} players")
        self._derive()
        kinds = config.kinds
        # Keyed deals are coupled with the printed deck (fairness.md, "Coupled deals").
        active_printed, chaos_printed = _printed_decks()
        self.chaos_deck = list(range(config.active_cards, len(kinds)))
        self.deal_cards(self.chaos_deck, kinds, chaos_printed)
        self.deck = list(range(config.active_cards))
        self.deal_cards(self.deck, kinds, active_printed)
        self.trash: list[int] = []
        self.chaos_discard: list[int] = []
        self.cult = [CULT_BY_NAME[c] for c in config.cults] or [-1] * n
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.members: list[list[int]] = [[] for _ in range(n)]
        self.tucked: list[list[int]] = [[] for _ in range(n)]
        self.hostages: list[list[int]] = [[] for _ in range(n)]
        self.shrine: list[list[int]] = [[] for _ in range(n)]
        self.stash: list[list[int]] = [[] for _ in range(n)]
        self.active = 0
        self.actions_left = 0
        self.pending: dict[str, Any] | None = None
        self.winner = -1
        self.over = False
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.known_deck: list[list[int]] = [[] for _ in range(n)]
        if config.cults:
            self._deal_and_start()
        else:
            self.pending = {"step": "cult", "seat": n - 1}  # TC-2: the dealer (last seat) first

    def _derive(self) -> None:
        """Read once into the state what the rules ask the config on every decision: a
        frozen config's attribute is a dict lookup each time (and `food_needed` an
        interpreted call), a field of the compiled state a C load (typed in rules.pxd).
        Clones and restored states are made without __init__, so `clone`, `from_json` and
        `check_invariants` (which asks the rules' own questions) derive them too; and the
        rules' two entry points derive them again if a position set up by hand was given
        another config since (`_derived_for`: one pointer comparison)."""
        cfg = self._derived_for = self.config
        self._kinds = cfg.kind_bytes
        self._tags = card_tags(cfg.kinds)  # each card's key in a keyed shuffle (cached per deck)
        self._hostage_cost = cfg.snackrifice_hostage_cost
        self._food_cost = cfg.snackrifice_food_cost
        self._food_needed = cfg.food_needed(self.num_players)
        self._chaos_amounts = {kind: cfg.either_or(kind) for kind in EITHER_OR}
        self._hand_size = cfg.hand_size
        self._actions_per_turn = cfg.actions_per_turn
        self._max_turns = cfg.max_turns
        self._trucks_draw = cfg.garbage_trucks_draw
        self._storm_food = cfg.thunderstorm_food

    def clone(self) -> TrashCultState:
        new = cast(TrashCultState, super().clone())
        new._derive()
        return new

    @classmethod
    def from_json(cls, doc: dict[str, Any], copy: bool = True, trusted: bool = False) -> TrashCultState:
        new = cast(TrashCultState, super().from_json(doc, copy, trusted))
        new._derive()  # a trusted document skips check_invariants, which derives them
        return new

    # --- setup and turns ----------------------------------------------------------------
    def _deal_and_start(self) -> None:
        """Deal one card at a time clockwise from seat 0, left of the dealer (G-1)."""
        for _ in range(self.config.deal):
            for s in range(self.num_players):
                self._draw(s, 1)
        self._begin_turn(0)

    def _begin_turn(self, seat: int) -> None:
        if self.turn >= self._max_turns:  # G-5: a draw
            self.over = True
            self.emit("end", -1, "turn cap {} reached: a draw", self._max_turns)
            return
        self.turn += 1
        self.active = seat
        self.actions_left = self._actions_per_turn
        if self.log is not None:
            self.emit("turn", seat, "turn {}: seat {}", self.turn, seat, turn=self.turn)
        held = len(self.hands[seat])
        size = self._hand_size
        self._draw(seat, size - held if held < size else 1)  # TC-4

    def _draw(self, seat: int, count: int) -> None:
        """TC-4: draw `count`, stopping early only when the deck and the trash are both empty."""
        hand = self.hands[seat]
        deck = self.deck
        if count < len(deck) and not any(self.known_deck):
            # Most draws: the deck outlasts them (no refill on the way) and nobody knows
            # what is in it (nothing to forget), so the cards simply move.
            for _ in range(count):
                hand.append(deck.pop())
        else:
            for drawn in range(count):
                card = self._deal_from(deck, self.trash)
                if card is None:
                    count = drawn
                    break
                hand.append(card)
                self._drew(seat, card)
        if self.log is not None:
            self.emit("draw", seat, "seat {} draws {} card(s)", seat, count, count=count)

    def _deal_from(self, deck: list[int], pile: list[int]) -> int | None:
        card = draw(
            deck, pile, self.rng, self._tags if self.shuffle else None
        )  # refills a deck that ran out while its pile was empty
        if not deck:  # most draws leave cards in the deck: nothing to refill
            self._refill(deck, pile)
        return card

    def _refill(self, deck: list[int], pile: list[int]) -> None:
        """TC-4 and its FAQ: the moment a deck runs out, its pile is shuffled into a new deck,
        before play goes on. The chaos deck and its discard work the same way."""
        if not deck and pile:
            deck.extend(pile)
            pile.clear()
            self.shuffle_cards(deck, self._tags)
            self.emit("reshuffle", -1, "a discard pile is shuffled into a new deck")

    def _end_turn(self) -> None:
        """TC-17: only the active player can win, and only now."""
        s = self.active
        if self.members[s] and len(self.shrine[s]) >= self._food_needed:
            self.winner = s
            self.over = True
            self.emit(
                "win",
                s,
                "seat {} wins: the {} cult's Shrine is full",
                s,
                CULTS[self.cult[s]],
                cult=CULTS[self.cult[s]],
            )
            return
        self._begin_turn((s + 1) % self.num_players)

    def score_breakdown(self) -> list[tuple[float, dict[str, float]]]:
        """Food in the Shrine against what fills it (TC-17), and the Cult Members kept."""
        needed = float(self.config.food_needed(self.num_players))
        return [
            (
                float(len(self.shrine[s])),
                {
                    "shrine_food": float(len(self.shrine[s])),
                    "food_needed": needed,
                    "cult_members": float(len(self.members[s])),
                },
            )
            for s in range(self.num_players)
        ]

    # --- the decision vocabulary --------------------------------------------------------
    def to_act(self) -> list[int]:
        if self.over:
            return []
        p = self.pending
        return [self.active if p is None else p["seat"]]

    def is_terminal(self) -> bool:
        return self.over

    def winners(self) -> list[int]:
        return [self.winner] if self.winner >= 0 else []

    def legal_actions(self, seat: int) -> list[int]:
        if self.over:
            return []
        if self._derived_for is not self.config:  # a config set on the state since
            self._derive()
        p = self.pending
        if p is None:
            if seat != self.active:
                return []
            s = seat  # the active seat: a C integer when built (rules.pxd), to index zones
            return _main_actions_of(
                s,
                self.hands,
                self.members[s],
                self.hostages[s],
                self.shrine[s],
                self.stash[s],
                self.cult[s],
                self._kinds,
                self._hostage_cost,
                self._food_cost,
            )
        if seat != p["seat"]:
            return []
        step = p["step"]
        if step == "chaos":
            return self._chaos_actions(seat, p)
        if step == "protect":
            return [PROTECT, NO_PROTECT] if self._holds(seat, PROTECTION_SPELL) else [NO_PROTECT]
        if step == "perk":
            return self._perk_choices(seat, p["perk"])
        if step == "steal":
            return [KEEP, *self._plays_of(seat, self._kinds[p["card"]])]
        return [PICK + c for c in range(4) if c not in self.cult]

    def _apply(self, seat: int, action: int) -> None:
        if self._derived_for is not self.config:  # a config set on the state since
            self._derive()
        p = self.pending
        if p is None:
            self.actions_left -= 1
            self._play(seat, action)
        else:
            step = p["step"]
            if step == "chaos":
                self._answer_chaos(seat, p, action)
            elif step == "protect":
                self._answer_protection(seat, p, action)
            elif step == "perk":
                self.pending = None
                self._use_perk(seat, p["perk"], action)
                self._after_effect(p["event"])
            elif step == "steal":
                self._answer_steal(seat, p, action)
            else:
                self._pick(seat, action)
        if self.pending is None and self.actions_left == 0 and not self.over:
            self._end_turn()

    # --- cult pick (TC-2) ---------------------------------------------------------------
    def _pick(self, seat: int, action: int) -> None:
        self.cult[seat] = action - PICK
        self.emit(
            "pick", seat, "seat {} leads the {} cult", seat, CULTS[action - PICK], cult=CULTS[action - PICK]
        )
        nxt = (seat + 1) % self.num_players
        if nxt == self.num_players - 1:  # back to the dealer: everyone has picked
            self.pending = None
            self._deal_and_start()
        else:
            self.pending = {"step": "cult", "seat": nxt}

    # --- the four action types ----------------------------------------------------------
    def _plays_of(self, s: int, kind: int) -> list[int]:
        """Ways to play a stolen card of `kind` for free (TC-13), as the main actions would
        play it. Protection Spell and Hide are answers, never actions (TC-9, TC-10): none."""
        if kind < FOOD + 4:
            return [ADD + kind]
        acts: list[int] = []
        _card_plays(acts, 1 << kind, s, self.hands, self.hostages[s], self._kinds)
        return acts

    def _play(self, s: int, action: int) -> None:
        """One action (or a stolen card's free play): only ever called with a legal id."""
        arg = DECODE[action][1]
        hand = self.hands[s]
        if action < SNACK_MEMBER:
            self._add(s, self._take(hand, arg), arg)
        elif action < CONVERT:
            self._snackrifice(s, action, arg)
        elif action < PLUSHIE:  # TC-15
            convert = self._take(hand, CONVERT_HOSTAGE)
            self.members[s].append(self._take(self.hostages[s], arg))
            self.tucked[s].append(convert)
            self.emit(
                "convert",
                s,
                "seat {} converts a {} Hostage into a Cult Member",
                s,
                KIND_NAMES[arg],
                card=_card(arg),
            )
        elif action < PIGEON:  # TC-12
            self.trash.append(self._take(hand, OPOSSUM_PLUSHIE))
            self.emit(
                "plushie", s, "seat {} plays Opossum Plushie for the {} perk", s, CULTS[arg],
                card=_card(OPOSSUM_PLUSHIE), cult=CULTS[arg],
            )  # fmt: skip
            self._open_protection("plushie", arg, -1)
        elif action < POISON:  # TC-13
            self.trash.append(self._take(hand, PIGEON_THIEF))
            victim = self.hands[arg]
            for t in range(self.num_players):  # the rest cannot tell which card went
                if t not in (s, arg):
                    self._forget(victim, only=t)
            card = victim.pop(self.rng.below(len(victim)))
            self.emit(
                "pigeon", s, "seat {} plays Pigeon Thief and steals a card from seat {}", s, arg,
                card=_card(PIGEON_THIEF), target=arg,
            )  # fmt: skip
            self.pending = {"step": "steal", "seat": s, "card": card, "victim": arg}
        elif action < DISCARD:  # TC-14
            self.trash.append(self._take(hand, POISON_THEIR_PUNCH))
            self.emit(
                "poison", s, "seat {} plays Poison Their Punch on seat {}", s, arg,
                card=_card(POISON_THEIR_PUNCH), target=arg,
            )  # fmt: skip
            self._open_protection("poison", -1, arg)
        elif action < PASS:  # TC-16
            self.trash.append(self._take(hand, arg))
            if self.log is not None:
                self.emit("discard", s, "seat {} discards {}", s, KIND_NAMES[arg], card=_card(arg))
        else:
            self.emit("pass", s, "seat {} passes (no other action is legal)", s)

    def _add(self, s: int, card: int, kind: int) -> None:
        """TC-6: own animal -> Cult Member, other animal -> Hostage, own food -> Shrine,
        other food -> Stash. `card` is of `kind` (the action names it)."""
        cult = self.cult[s]
        if kind == cult:
            self.members[s].append(card)
            self.tucked[s].append(-1)
            where, zone = "a Cult Member", "members"
        elif kind < FOOD:
            self.hostages[s].append(card)
            where, zone = "a Hostage", "hostages"
        elif kind == FOOD + cult:
            self.shrine[s].append(card)
            where, zone = "their Shrine", "shrine"
        else:
            self.stash[s].append(card)
            where, zone = "their Stash", "stash"
        if self.log is not None:  # half of all actions: not even the call when nobody listens
            self.emit(
                "add", s, "seat {} adds {} to {}", s, KIND_NAMES[kind], where, card=_card(kind), zone=zone
            )

    def _snackrifice(self, s: int, action: int, arg: int) -> None:
        """TC-7 / TC-9: pay, then the Protection Spell window; perk and chaos follow."""
        if action < SNACK_HOSTAGES:
            self._trash_member(s, arg)
            paid = f"a {KIND_NAMES[arg]} Cult Member"
        elif action < SNACK_FOOD:
            cost = self._hostage_cost
            for _ in range(cost):
                self.trash.append(self._take(self.hostages[s], arg))
            paid = f"{cost} {KIND_NAMES[arg]} Hostages"
        else:
            cost = self._food_cost
            for _ in range(cost):
                self._trash_food(s, arg)
            paid = f"{cost} {KIND_NAMES[FOOD + arg]}"
        # The argument is the paid animal's kind or the paid food's cult: the perk's cult.
        self.emit(
            "snackrifice", s, "seat {} snackrifices {} for the {} perk", s, paid, CULTS[arg], cult=CULTS[arg]
        )
        self._open_protection("snackrifice", arg, -1)

    # --- Protection Spell window (TC-9, TC-10, G-4) -------------------------------------
    def _open_protection(self, event: str, perk: int, target: int) -> None:
        """Every seat but the acting one is asked in turn order; one spell at most."""
        first = (self.active + 1) % self.num_players
        self.pending = {"step": "protect", "seat": first, "event": event, "perk": perk, "target": target}

    def _answer_protection(self, seat: int, p: dict[str, Any], action: int) -> None:
        event = p["event"]
        if action == PROTECT:
            self.trash.append(self._take(self.hands[seat], PROTECTION_SPELL))
            self.emit(
                "protect", seat, "seat {} plays Protection Spell: the {} has no effect", seat, event,
                card=_card(PROTECTION_SPELL), effect=event,
            )  # fmt: skip
            self.pending = None
            self._after_effect(event)
            return
        nxt = (seat + 1) % self.num_players
        if nxt != self.active:
            p["seat"] = nxt
            return
        self.pending = None
        if event == "poison":  # TC-14: Cult Members go, with their Convert cards; Hostages stay
            target = p["target"]
            self.trash += self.members[target]
            self.trash += [c for c in self.tucked[target] if c >= 0]
            self.members[target] = []
            self.tucked[target] = []
            self.emit("poisoned", target, "seat {} loses every Cult Member", target)
            return
        self._start_perk(event, p["perk"])

    def _after_effect(self, event: str) -> None:
        """TC-9: a Snackrifice reveals chaos whether or not its perk happened."""
        if event == "snackrifice":
            self._reveal_chaos()

    # --- perks (TC-8) -------------------------------------------------------------------
    def _start_perk(self, event: str, perk: int) -> None:
        s = self.active
        if perk == RAT:
            food = FOOD + self.cult[s]
            kinds = self._kinds
            for i, c in enumerate(self.trash):
                if kinds[c] == food:
                    self.shrine[s].append(self.trash.pop(i))
                    self.emit(
                        "perk", s, "seat {} takes {} from the trash pile", s, KIND_NAMES[food],
                        card=_card(food), cult=CULTS[perk],
                    )  # fmt: skip
                    break
            self._after_effect(event)
            return
        if perk == SQUIRREL:
            # TC-4's FAQ: the trash is shuffled into a new deck the moment the deck runs out.
            # A deck that ran out while the trash was empty stays empty until a card is
            # needed from it; the search needs it, and the trash may have filled since (the
            # Snackrifice's own payment, an Opossum Plushie, discards).
            self._refill(self.deck, self.trash)
        choices = self._perk_choices(s, perk)
        # The searcher always chooses, so whether it is asked says nothing about the deck.
        if len(choices) > 1 or (choices and perk == SQUIRREL):
            self.pending = {"step": "perk", "seat": s, "perk": perk, "event": event}
            return
        if choices:
            self._use_perk(s, perk, choices[0])
        self._after_effect(event)

    def _perk_choices(self, s: int, perk: int) -> list[int]:
        """TC-7: an empty list is a perk without target, which simply does nothing."""
        n = self.num_players
        kinds = self._kinds
        if perk == RACCOON:
            food = FOOD + self.cult[s]
            return [TARGET + t for t in range(n) if t != s and _last_of(self.stash[t], kinds, food) >= 0]
        if perk == SKUNK:
            return [TARGET + t for t in range(n) if t != s and self.shrine[t]]
        held = _kind_mask(self.deck, kinds)  # SQUIRREL: the active deck's kinds, in order
        return [*_TAKES_LOW[held & 255], *_TAKES_HIGH[held >> 8 & 63]]

    def _use_perk(self, s: int, perk: int, action: int) -> None:
        if perk == RACCOON:
            t = action - TARGET
            food = FOOD + self.cult[s]
            self.shrine[s].append(self._take(self.stash[t], food))
            self.emit(
                "perk", s, "seat {} takes {} from seat {}'s Stash", s, KIND_NAMES[food], t,
                card=_card(food), target=t, cult=CULTS[perk],
            )  # fmt: skip
        elif perk == SKUNK:
            t = action - TARGET
            card = self.shrine[t].pop()
            self.stash[s].append(card)
            taken = self._kinds[card]
            self.emit(
                "perk", s, "seat {} takes {} from seat {}'s Shrine into their Stash", s, KIND_NAMES[taken], t,
                card=_card(taken), target=t, cult=CULTS[perk],
            )  # fmt: skip
        else:  # SQUIRREL: which card stays secret; the deck is shuffled afterwards
            self.hands[s].append(self._take(self.deck, action - TAKE))
            self.shuffle_cards(self.deck, self._tags)
            self._refill(self.deck, self.trash)
            for t in range(self.num_players):  # only the searcher knows the deck now
                self.known_deck[t] = list(self.deck) if t == s else []
            self.emit("perk", s, "seat {} searches the active deck and takes a card", s, cult=CULTS[perk])

    # --- chaos (TC-9, TC-11) ------------------------------------------------------------
    def _reveal_chaos(self) -> None:
        card = self._deal_from(self.chaos_deck, self.chaos_discard)
        if card is None:
            return
        self.emit("chaos", -1, "chaos: {}", KIND_NAMES[self._kinds[card]], card=_card(self._kinds[card]))
        self.pending = {
            "step": "chaos",
            "seat": self.active,
            "card": card,
            "hiders": [],
            "want": "",
            "left": 0,
        }

    def _chaos_actions(self, q: int, p: dict[str, Any]) -> list[int]:
        want = p["want"]
        if want:
            return self._trash_choices(q, want)
        acts = [HIDE_ACT] if self._holds(q, HIDE) else []
        kind = self._kinds[p["card"]]
        if kind in EITHER_OR:
            acts += self._either_or(q, kind) or [RESOLVE]
        else:
            acts.append(RESOLVE)
        return acts

    def _either_or(self, q: int, kind: int) -> list[int]:
        """TC-11: the options payable in full; else the one losing most, as far as it goes."""
        need_animals, need_food = self._chaos_amounts[kind]
        animals = self._losable(q, "animal")
        food = self._losable(q, "food")
        full = [LOSE_ANIMALS] * (animals >= need_animals) + [LOSE_FOOD] * (food >= need_food)
        if full or not (animals or food):
            return full
        most = max(animals, food)  # each option loses all that seat has of it
        return [LOSE_ANIMALS] * (animals == most) + [LOSE_FOOD] * (food == most)

    def _answer_chaos(self, q: int, p: dict[str, Any], action: int) -> None:
        kind = self._kinds[p["card"]]
        if action == HIDE_ACT:
            self.trash.append(self._take(self.hands[q], HIDE))
            p["hiders"].append(q)
            self.emit("hide", q, "seat {} plays Hide", q, card=_card(HIDE))
        elif action == RESOLVE:
            self._resolve_chaos(q, kind)
        elif action in (LOSE_ANIMALS, LOSE_FOOD):
            want = "animal" if action == LOSE_ANIMALS else "food"
            p["want"] = want
            p["left"] = min(self._chaos_amounts[kind][action - LOSE_ANIMALS], self._losable(q, want))
        else:
            self._trash_chosen(q, action)
            p["left"] -= 1
        if p["want"]:
            # The seat is asked only when what it keeps depends on its answer.
            while p["left"]:
                choices = self._trash_choices(q, p["want"])
                if len(choices) > 1 and p["left"] < self._losable(q, p["want"]):
                    return
                self._trash_chosen(q, choices[0])
                p["left"] -= 1
            p["want"] = ""
        nxt = (q + 1) % self.num_players
        if nxt != self.active:
            p["seat"] = nxt
            return
        if kind == TRASH_SWAP:
            self._swap_hands(p["hiders"])
        self.chaos_discard.append(p["card"])
        self.pending = None

    def _resolve_chaos(self, q: int, kind: int) -> None:
        """The chaos cards without a choice, for seat q ("you")."""
        if kind == ANIMAL_CONTROL:
            self.trash += self.hostages[q]
            self.hostages[q] = []
        elif kind == TRASHNADO:
            self.trash += self.stash[q]
            self.stash[q] = []
        elif kind == GARBAGE_TRUCKS:
            self._draw(q, self._trucks_draw)
        elif kind == LUNAR_ECLIPSE:  # converted members become Hostages again
            natural = []
            for member, convert in zip(self.members[q], self.tucked[q], strict=True):
                if convert < 0:
                    natural.append(member)
                else:
                    self.hostages[q].append(member)
                    self.trash.append(convert)
            self.members[q] = natural
            self.tucked[q] = [-1] * len(natural)
        elif kind == THUNDERSTORM:
            shrine = self.shrine[q]
            for _ in range(min(self._storm_food, len(shrine))):
                self.trash.append(shrine.pop())
        # Trash Swap waits until everyone has answered; Hungry Bear and Rat Poison come
        # here only when the seat has nothing to lose.
        self.emit("resolve", q, "seat {} resolves {}", q, KIND_NAMES[kind], card=_card(kind))

    def _swap_hands(self, hiders: list[int]) -> None:
        """Trash Swap: each hand passes to the next seat on the left that did not Hide."""
        seats = [s for s in range(self.num_players) if s not in hiders]
        hands = [self.hands[s] for s in seats]
        for s in seats:
            self._learn(s, self.hands[s])  # each seat knows where its old hand went
        for i, s in enumerate(seats):
            self.hands[s] = hands[i - 1]
        self.emit("swap", -1, "hands pass to the left among seats {}", seats)

    def _losable(self, q: int, want: str) -> int:
        """TC-11: "animal" means a Cult Member or a Hostage, "food" the Shrine or Stash."""
        if want == "animal":
            return len(self.members[q]) + len(self.hostages[q])
        return len(self.shrine[q]) + len(self.stash[q])

    def _trash_choices(self, q: int, want: str) -> list[int]:
        """One choice per kind the seat can lose, in kind order (members are animals and
        Hostages too; the Shrine and Stash hold food: TC-6)."""
        kinds = self._kinds
        if want == "animal":
            members = _TRASH_MEMBERS[_kind_mask(self.members[q], kinds) & 15]
            return [*members, *_TRASH_HOSTAGES[_kind_mask(self.hostages[q], kinds) & 15]]
        foods = _kind_mask(self.shrine[q], kinds) | _kind_mask(self.stash[q], kinds)
        return list(_TRASH_FOODS[foods >> FOOD & 15])

    def _trash_chosen(self, q: int, action: int) -> None:
        arg = DECODE[action][1]
        if action < TRASH_HOSTAGE:
            self._trash_member(q, arg)
            what, lost, zone = f"a {KIND_NAMES[arg]} Cult Member", arg, "members"
        elif action < TRASH_FOOD:
            self.trash.append(self._take(self.hostages[q], arg))
            what, lost, zone = f"a {KIND_NAMES[arg]} Hostage", arg, "hostages"
        else:
            self._trash_food(q, arg)
            what, lost, zone = KIND_NAMES[FOOD + arg], FOOD + arg, None
        self.emit(
            "trash", q, "seat {} trashes {}", q, what, card=_card(lost), **({"zone": zone} if zone else {})
        )

    # --- Pigeon Thief's free play (TC-13) -----------------------------------------------
    def _answer_steal(self, s: int, p: dict[str, Any], action: int) -> None:
        self.hands[s].append(p["card"])
        self._learn(p["victim"], (p["card"],))  # the victim knows the thief holds it
        self.pending = None
        if action == KEEP:
            self.emit("keep", s, "seat {} keeps the stolen card", s)
            return
        kind = self._kinds[p["card"]]
        self.emit(
            "free", s, "seat {} plays the stolen {} as a free action", s, KIND_NAMES[kind], card=_card(kind)
        )
        self._play(s, action)

    # --- zone helpers -------------------------------------------------------------------
    def _take(self, zone: list[int], kind: int) -> int:
        """Remove and return a card of `kind` from `zone` (the caller knows there is one).

        A card taken from a hand or the deck is played face up or taken unseen: either
        way what any seat remembered of its place lapses."""
        i = _last_of(zone, self._kinds, kind)
        if i < 0:
            raise BadState(f"no {KIND_NAMES[kind]} where the rules expect one")
        card = zone.pop(i)
        gone = (card,)
        _forget_in(self.known, gone, -1)  # `_forget`, without the call on most actions' path
        _forget_in(self.known_deck, gone, -1)
        return card

    # --- what each seat knows of hidden cards (issue 16) --------------------------------
    def _learn(self, seat: int, cards: Any) -> None:
        record = self.known[seat]
        for c in cards:
            if c not in record:
                record.append(c)

    def _forget(self, cards: Any, only: int = -1) -> None:
        """`cards` moved out of sight or into plain view: drop them from every record (or
        from seat `only`'s)."""
        _forget_in(self.known, cards, only)  # the two kinds of record are independent
        _forget_in(self.known_deck, cards, only)

    def _drew(self, seat: int, card: int) -> None:
        """The drawer sees its card leave the deck; the others cannot tell which card of
        those they knew went, so what they knew of the deck lapses."""
        for s, record in enumerate(self.known_deck):
            if record:
                if s != seat:
                    record.clear()
                elif card in record:
                    record.remove(card)

    def _holds(self, seat: int, kind: int) -> bool:
        return _last_of(self.hands[seat], self._kinds, kind) >= 0

    def _trash_member(self, s: int, kind: int) -> None:
        """A converted member takes its Convert Hostage card with it (TC-7)."""
        members, tucked = self.members[s], self.tucked[s]
        i = _last_of(members, self._kinds, kind)
        if i < 0:
            raise BadState(f"no {KIND_NAMES[kind]} Cult Member where the rules expect one")
        self.trash.append(members.pop(i))
        convert = tucked.pop(i)
        if convert >= 0:
            self.trash.append(convert)

    def _trash_food(self, s: int, cult: int) -> None:
        """TC-7: food is paid from the Shrine and/or the Stash."""
        food = FOOD + cult
        zone = self.shrine[s] if food == FOOD + self.cult[s] else self.stash[s]
        self.trash.append(self._take(zone, food))

    # --- what a seat may see (G-3) ------------------------------------------------------
    def view(self, seat: int | None) -> dict[str, Any]:
        kinds = self.config.kinds

        def names(zone: list[int]) -> list[str]:
            return [KIND_NAMES[kinds[c]] for c in zone]

        seats = [
            {
                "cult": CULTS[self.cult[s]] if self.cult[s] >= 0 else "",
                "hand_size": len(self.hands[s]),
                "members": names(self.members[s]),
                "converted": [t >= 0 for t in self.tucked[s]],
                "hostages": names(self.hostages[s]),
                "shrine": names(self.shrine[s]),
                "stash": names(self.stash[s]),
            }
            for s in range(self.num_players)
        ]
        return {
            "seat": seat,
            "players": self.num_players,
            "turn": self.turn,
            "active": self.active,
            "actions_left": self.actions_left,
            "food_needed": self.config.food_needed(self.num_players),
            "deck_size": len(self.deck),
            "trash": names(self.trash),
            "chaos_deck_size": len(self.chaos_deck),
            "chaos_discard": names(self.chaos_discard),
            "hand": names(self.hands[seat]) if seat is not None else [],
            "seats": seats,
            "pending": self._pending_view(seat),
            "over": self.over,
            "winner": self.winner if self.winner >= 0 else None,
        }

    def _pending_view(self, seat: int | None) -> dict[str, Any] | None:
        p = self.pending
        if p is None:
            return None
        kinds = self.config.kinds
        step = p["step"]
        perk = p.get("perk", -1)
        mine = seat == p["seat"]
        searching = step == "perk" and perk == SQUIRREL and mine  # the searcher sees the deck
        return {
            "step": step,
            "seat": p["seat"],
            "event": p.get("event", ""),
            "perk": CULTS[perk] if perk >= 0 else "",
            "target": p["target"] if p.get("target", -1) >= 0 else None,
            "chaos": KIND_NAMES[kinds[p["card"]]] if step == "chaos" else "",
            "hiders": list(p.get("hiders", [])),
            "want": p.get("want", ""),
            "left": p.get("left", 0),
            "victim": p.get("victim"),
            "stolen": KIND_NAMES[kinds[p["card"]]] if step == "steal" and mine else "",
            "search": [KIND_NAMES[k] for k in sorted(kinds[c] for c in self.deck)] if searching else [],
        }

    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Re-deal what `observer` cannot see. Cards it knows are in a hand stay there; a
        deck whose contents it knows (searching it now, or since its search) is only
        re-ordered."""
        p = self.pending
        fixed = set(self.known[observer])
        in_deck = set(self.known_deck[observer])
        if p is not None and p["step"] == "perk" and p["perk"] == SQUIRREL and p["seat"] == observer:
            in_deck = set(self.deck)  # the searcher sees what is in the deck, not its order
        if in_deck:
            shuffle_in_place(self.deck, in_deck, rng)
        # The thief saw the stolen card, and its victim saw it leave its hand.
        stolen = (
            [p["card"]]
            if p is not None and p["step"] == "steal" and observer not in (p["seat"], p["victim"])
            else []
        )
        zones = [hand for s, hand in enumerate(self.hands) if s != observer]
        redeal_keeping([*zones, self.deck, stolen], fixed | in_deck, rng)
        for hand in zones:
            hand.sort()  # so where a known card lay in it tells nothing
        if stolen:
            p["card"] = stolen[0]  # type: ignore[index]
        rng.shuffle(self.chaos_deck)

    # --- words for actions --------------------------------------------------------------
    def action_label(self, action: int) -> str:
        if not 0 <= action < N_ACTIONS:
            return f"unknown action {action}"
        cfg = self.config
        return _label(action, cfg.snackrifice_hostage_cost, cfg.snackrifice_food_cost)

    def action_detail(self, action: int) -> dict[str, Any]:
        f, arg = DECODE[action]
        name, what, _size = FAMILIES[f]
        detail: dict[str, Any] = {"kind": name}
        if what == "card":
            detail["card"] = KIND_NAMES[arg]
        elif what == "cult":
            detail["cult"] = CULTS[arg]
        elif what == "seat":
            detail["seat"] = arg
        return detail

    def action_text_key(self, action: int) -> Hashable | None:
        """An action's words come from its id and the config's Snackrifice costs alone."""
        return action

    # --- validation of restored states --------------------------------------------------
    def check_invariants(self) -> None:
        self._derive()  # from_json checks a state before it can derive them
        n = self.num_players
        cfg = self.config
        kinds = cfg.kinds
        active_cards = cfg.active_cards
        for name in ("deck", "trash", "chaos_deck", "chaos_discard"):
            _card_list(getattr(self, name), name)
        for name, top in (("known", len(kinds)), ("known_deck", active_cards)):
            records = getattr(self, name)
            if type(records) is not list or len(records) != n:
                raise BadState(f"{name} must be a list of {n} lists of cards")
            for record in records:
                _card_list(record, name)
                if any(c >= top for c in record) or len(set(record)) != len(record):
                    raise BadState(f"{name} must list distinct cards below {top}, got {record!r}")
        for name in ("hands", "members", "tucked", "hostages", "shrine", "stash"):
            zones = getattr(self, name)
            if type(zones) is not list or len(zones) != n:
                raise BadState(f"{name} must hold one list per seat")
            for zone in zones:
                _card_list(zone, name, allow_none=name == "tucked")
        cult = self.cult
        if (
            type(cult) is not list
            or len(cult) != n
            or any(type(c) is not int or not -1 <= c < 4 for c in cult)
        ):
            raise BadState(f"cult must list each seat's cult 0..3 or -1, got {cult!r}")
        picked = [c for c in cult if c >= 0]
        if len(set(picked)) != len(picked):
            raise BadState(f"two seats lead the same cult: {cult}")
        if cfg.cults and cult != [CULT_BY_NAME[c] for c in cfg.cults]:
            raise BadState("cult differs from the cults the config fixes")
        if not _is_seat(self.active, n) or type(self.actions_left) is not int:
            raise BadState("active must be a seat and actions_left a number")
        if not 0 <= self.turn <= cfg.max_turns:
            raise BadState(f"turn {self.turn} out of 0..{cfg.max_turns} (G-5)")
        if not 0 <= self.actions_left <= cfg.actions_per_turn:
            raise BadState(f"actions_left {self.actions_left} out of 0..{cfg.actions_per_turn}")
        if type(self.over) is not bool or type(self.winner) is not int or not -1 <= self.winner < n:
            raise BadState("over must be true/false and winner -1 or a seat")
        if self.winner >= 0 and not self.over:
            raise BadState("a winner is named only once the game is over")
        if self.over and self.winner < 0 and self.turn < cfg.max_turns:
            raise BadState("a game ends with a winner, or with none at the turn cap (G-5)")
        held = self._check_pending(n, active_cards)
        zones = [self.deck, self.trash, self.chaos_deck, self.chaos_discard, held]
        for name in ("hands", "members", "hostages", "shrine", "stash"):
            zones += getattr(self, name)
        zones += [[c for c in t if c >= 0] for t in self.tucked]
        check_conservation(zones, len(kinds))
        self._check_kinds(n, kinds, active_cards)

    def _check_pending(self, n: int, active_cards: int) -> list[int]:
        """Validate `pending`; returns the cards it holds (for conservation)."""
        p = self.pending
        picking = -1 in self.cult
        if p is None:
            if picking or (not self.over and self.actions_left == 0):
                raise BadState("nobody is asked to decide in a game that is not over")
            return []
        if self.over or type(p) is not dict or p.get("step") not in STEPS or set(p) != STEPS[p["step"]]:
            raise BadState(f"bad pending decision {p!r}")
        step, seat = p["step"], p["seat"]
        if not _is_seat(seat, n):
            raise BadState(f"pending seat {seat!r} is not a seat")
        if step == "cult":
            order = [n - 1, *range(n - 1)]  # TC-2: dealer first
            if not picking or seat != next(s for s in order if self.cult[s] < 0):
                raise BadState(f"seat {seat} is not the next to pick a cult")
            return []
        if picking:
            raise BadState("play cannot begin before every seat has a cult")
        perk = p.get("perk", -1)
        if step == "protect":
            event, target = p["event"], p["target"]
            ok = seat != self.active and event in PROTECTED_EVENTS and type(perk) is int
            if event == "poison":
                ok = ok and perk == -1 and _is_seat(target, n) and target != self.active
            else:
                ok = ok and 0 <= perk < 4 and target == -1
            if not ok:
                raise BadState(f"bad Protection Spell window {p!r}")
            return []
        if step == "perk":
            if seat != self.active or perk not in (RACCOON, SKUNK, SQUIRREL) or type(perk) is not int:
                raise BadState(f"bad perk decision {p!r}")
            if p["event"] not in ("snackrifice", "plushie") or not self._perk_choices(seat, perk):
                raise BadState(f"bad perk decision {p!r}")
            return []
        card = p["card"]
        if type(card) is not int or not 0 <= card < len(self.config.kinds):
            raise BadState(f"pending card {card!r} is not a card")
        if step == "steal":
            if seat != self.active or not _is_seat(p["victim"], n) or p["victim"] == seat:
                raise BadState(f"bad Pigeon Thief decision {p!r}")
            if card >= active_cards:
                raise BadState("a stolen card must come from the active deck")
            return [card]
        hiders, want, left = p["hiders"], p["want"], p["left"]
        if card < active_cards or type(hiders) is not list or len(set(hiders)) != len(hiders):
            raise BadState(f"bad chaos decision {p!r}")
        if any(not _is_seat(h, n) for h in hiders) or want not in ("", "animal", "food"):
            raise BadState(f"bad chaos decision {p!r}")
        if type(left) is not int or (left > 0) != bool(want) or left < 0:
            raise BadState(f"bad chaos decision {p!r}")
        return [card]

    def _check_kinds(self, n: int, kinds: tuple[int, ...], active_cards: int) -> None:
        """Every card sits in a zone its kind may be in (TC-6's placement, TC-1's decks)."""
        for name in ("deck", "trash"):
            if any(c >= active_cards for c in getattr(self, name)):
                raise BadState(f"a chaos card is in the {name}")
        for name in ("chaos_deck", "chaos_discard"):
            if any(c < active_cards for c in getattr(self, name)):
                raise BadState(f"an active card is in the {name}")
        for s in range(n):
            cult = self.cult[s]
            if any(c >= active_cards for c in self.hands[s]):
                raise BadState(f"a chaos card is in seat {s}'s hand")
            if cult < 0:
                if self.members[s] or self.hostages[s] or self.shrine[s] or self.stash[s] or self.hands[s]:
                    raise BadState("cards are dealt only after every cult is picked (TC-2)")
                continue
            members, tucked = self.members[s], self.tucked[s]
            if len(tucked) != len(members):
                raise BadState(f"seat {s}: tucked must run parallel to members")
            for m, t in zip(members, tucked, strict=True):
                natural = kinds[m] == cult
                if kinds[m] >= FOOD or natural != (t < 0) or (t >= 0 and kinds[t] != CONVERT_HOSTAGE):
                    raise BadState(f"seat {s}: Cult Member {m} / tucked {t} do not fit (TC-6, TC-15)")
            if any(kinds[c] >= FOOD or kinds[c] == cult for c in self.hostages[s]):
                raise BadState(f"seat {s}: a Hostage must be another cult's animal (TC-6)")
            if any(kinds[c] != FOOD + cult for c in self.shrine[s]):
                raise BadState(f"seat {s}: the Shrine holds only the cult's own food (TC-6)")
            if any(not FOOD <= kinds[c] < FOOD + 4 or kinds[c] == FOOD + cult for c in self.stash[s]):
                raise BadState(f"seat {s}: the Stash holds only other cults' food (TC-6)")
        p = self.pending
        if p is not None and p["step"] == "chaos" and p["want"]:
            q = p["seat"]
            have = self._losable(q, p["want"])
            if p["left"] >= have:  # with no choice left, the cards would already be gone
                raise BadState(f"seat {q} must trash {p['left']} cards but has {have}")


def _is_seat(value: Any, n: int) -> bool:
    return type(value) is int and 0 <= value < n


def _card_list(zone: Any, name: str, allow_none: bool = False) -> None:
    """A zone is a list of card ids (and -1 for `tucked`'s natural members)."""
    if type(zone) is not list or any(
        type(c) is not int or (c < 0 and not (allow_none and c == -1)) for c in zone
    ):
        raise BadState(f"{name} must be a list of card ids, got {zone!r}")


@functools.lru_cache(maxsize=4096)
def _label(action: int, hostages: int, foods: int) -> str:
    """An action's words, which depend on nothing but the action and the two costs: made
    once each, since formatting them was a fifth of an engine's Apply (every legal action
    of the Step is labelled)."""
    f, arg = DECODE[action]
    name, what, _size = FAMILIES[f]
    return _LABELS[name].format(
        card=KIND_NAMES[arg] if what == "card" else "",
        cult=CULTS[arg] if what == "cult" else "",
        perk=PERKS[arg] if what == "cult" else "",
        food=KIND_NAMES[FOOD + arg],
        seat=arg,
        hostages=hostages,
        foods=foods,
    )


_LABELS = {
    "add": "add {card}",
    "snackrifice_member": "snackrifice a {card} Cult Member",
    "snackrifice_hostages": "snackrifice {hostages} {card} Hostages",
    "snackrifice_food": "snackrifice {foods} {food}",
    "convert_hostage": "Convert Hostage: convert a {card}",
    "opossum_plushie": "Opossum Plushie: {cult} perk, {perk}",
    "pigeon_thief": "Pigeon Thief: rob seat {seat}",
    "poison_their_punch": "Poison Their Punch: poison seat {seat}",
    "discard": "discard {card}",
    "pass": "pass",
    "keep": "keep the stolen card",
    "pick_cult": "lead the {cult} cult",
    "protection_spell": "play Protection Spell",
    "no_protection": "let it happen",
    "perk_target": "take from seat {seat}",
    "search_take": "take {card} from the deck",
    "hide": "play Hide",
    "resolve": "resolve the chaos card",
    "lose_animals": "lose animals",
    "lose_food": "lose food",
    "trash_member": "trash a {card} Cult Member",
    "trash_hostage": "trash a {card} Hostage",
    "trash_food": "trash a {food}",
}
