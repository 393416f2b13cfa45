"""A determinisation never contradicts what the seat has observed (issue 16).

IS-MCTS plays on copies of the position whose hidden cards are re-dealt
(`State.resample_hidden`). Such a copy must be a world the seat could be in: everything it
has seen must still hold. Each test plays random games and keeps, for every seat, an
independent notebook of what that seat observed, written from the moves as they are
made (not from the engine's own bookkeeping); at random moments every seat's
determinisations are checked against its notebook and its view.

What each notebook holds:
- every game: the seat's own view and the spectator's view (sizes, public zones, scores);
- Tricky Cultists: the agenda cards the seat saw in its draft pack (seats drafting after
  it kept from those, seats before it did not), and every void a seat revealed by not
  following suit, loosened only by the Codex cards it took into hand since (TK-7);
- Crazy Cultists: the hand a look showed the seat (Evil Eye, Ouija, Hail), the cards a
  Nerdronomicon shows, the deck contents a search shows, while the look lasts; after it, the
  card a Scrying Bones search took (shown to everyone), and a card the seat put on top
  (Nerdronomicon, Forbidden Alchemy) followed into the hand that drew it;
- Trash Cult: the card a Pigeon Thief takes (seen by the thief, and by its victim, whose
  hand lost it) and the deck contents a Squirrel search shows.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.engines.core.bots import make_bot
from services.engines.core.game import State
from services.engines.core.rng import Rng
from services.engines.crazy_cultists.rules import CHOOSE
from services.engines.registry import load_game
from services.engines.trash_cult.cards import SQUIRREL
from services.engines.tricky_cultists.rules import DRAFT, STRIDE, SWAP, TAKE
from tests.support.positions import act

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- Tricky Cultists: an independent notebook per seat -----------------------------------
@dataclass
class TrickyNotes:
    """What every seat has seen this round, from the moves alone."""

    round: int = -1
    seen_pack: dict[int, set[int]] = field(default_factory=dict)  # seat -> agenda ids it was handed
    draft_place: dict[int, int] = field(default_factory=dict)  # seat -> its place in the draft order
    events: list[tuple[str, int, int]] = field(default_factory=list)  # (what, seat, suit)

    def watch(self, state: Any, seat: int, action: int) -> None:
        """Record what the table sees of `action` before it is applied."""
        if state.round != self.round:
            self.round, self.seen_pack, self.draft_place, self.events = state.round, {}, {}, []
        ranks = state.config.ranks
        if state.phase == DRAFT:
            self.seen_pack[seat] = set(state.pack)
            self.draft_place[seat] = len(self.draft_place)
        kind, arg = divmod(action, STRIDE)
        if state.phase == "play":
            if state.trick and arg // ranks != state.trick[0] // ranks:
                self.events.append(("void", seat, state.trick[0] // ranks))
            self.events.append(("play", seat, arg // ranks))
        elif kind in (TAKE, SWAP):
            self.events.append(("codex", seat, -1))

    def check(self, truth: Any, det: Any, observer: int) -> None:
        if truth.round != self.round:
            return  # nothing observed yet in this round
        ranks = det.config.ranks
        for s in range(det.num_players):
            if s == observer:
                continue
            for i, (what, seat, suit) in enumerate(self.events):
                if what != "void" or seat != s:
                    continue
                later = [e for e in self.events[i + 1 :] if e[1] == s]
                most = sum(1 for e in later if e[0] == "codex") - sum(
                    1 for e in later if e[0] == "play" and e[2] == suit
                )
                held = sum(1 for c in det.hands[s] if c // ranks == suit)
                assert held <= most, (
                    f"seat {observer} saw seat {s} run out of suit {suit}; since then it took "
                    f"{most} Codex card(s) it has not played, yet the determinisation gives it {held}"
                )
        if det.phase != DRAFT or observer not in self.seen_pack:
            return
        seen, mine = self.seen_pack[observer], self.draft_place[observer]
        for s, place in self.draft_place.items():
            if s == observer or det.agendas[s] < 0:
                continue
            if place > mine:
                assert det.agendas[s] in seen, f"seat {s} kept an agenda seat {observer} never passed it"
            else:
                assert det.agendas[s] not in seen, f"seat {s} kept an agenda seat {observer} saw after it"
        assert set(det.pack) <= seen, f"the pack holds an agenda seat {observer} never saw in it"


# --- Crazy Cultists and Trash Cult: what a pending look shows -----------------------------
def crazy_shown(state: Any, observer: int) -> Any:
    """The cards (by kind) a pending look shows `observer`, as the engine's view names them."""
    p = state.pending
    if p is None:
        return None
    kinds = state.kind
    shown: dict[str, Any] = {}
    if p["kind"] == "hail":
        shown["hands"] = [sorted(kinds[c] for c in h) for s, h in enumerate(state.hands) if s != p["player"]]
    if p["player"] == observer:
        if p["kind"] in ("evil_eye", "ouija"):
            shown["target"] = sorted(kinds[c] for c in state.hands[p["target"]])
        elif p["kind"] in ("nerd_keep", "nerd_top"):
            shown["nerd"] = sorted(kinds[c] for c in p["cards"])
        elif p["kind"] == "scry":
            shown["deck"] = sorted(kinds[c] for c in state.deck)
    return shown


def trash_shown(state: Any, observer: int) -> Any:
    p = state.pending
    if p is None:
        return None
    shown: dict[str, Any] = {}
    if p["step"] == "steal" and observer in (p["seat"], p["victim"]):
        shown["stolen"] = state.config.kinds[p["card"]]
    if p["step"] == "perk" and p["seat"] == observer and p.get("perk") == SQUIRREL:  # a search
        shown["deck"] = Counter(state.config.kinds[c] for c in state.deck)
    return shown


# --- Crazy Cultists and Trash Cult: what a seat remembers after a look ends ---------------
@dataclass
class HandNotes:
    """What each seat remembers once a look is over, written from the moves: the cards it
    saw in another hand (Evil Eye, Ouija, Hail; a card stolen from it; a whole hand it
    passed on), the top cards it put back on the deck (Nerdronomicon, Forbidden Alchemy) and
    the deck's contents after its search. It forgets more readily than the engine may: an
    entry about a hand lapses as soon as any card leaves that hand, an entry about the deck
    as soon as any card leaves the deck, so it asks only what a seat surely still knows."""

    hands: list[tuple[int, int, set[int]]] = field(default_factory=list)  # (seat, holder, ids)
    tops: list[tuple[int, dict[int, int]]] = field(default_factory=list)  # (seat, {index: id})
    contents: list[tuple[int, set[int]]] = field(default_factory=list)  # (seat, ids)
    before: Any = None

    def watch(self, state: Any, seat: int, action: int) -> None:
        self.before = (
            [set(h) for h in state.hands],
            list(state.deck),
            None if state.pending is None else dict(state.pending),
            seat,
            action,
        )

    def after(self, state: Any) -> None:
        hands, deck, p, seat, action = self.before
        now = [set(h) for h in state.hands]
        gone = {t for t in range(len(now)) if hands[t] - now[t]}
        self.hands = [e for e in self.hands if e[1] not in gone]
        left = set(deck) - set(state.deck)
        if left:
            # A card a seat put on top and then saw drawn into a hand (a draw is public, and
            # the seat knows which card was on top) is known in that hand (issue 16).
            for o, at in self.tops:
                for c in at.values():
                    holder = next((t for t in range(len(now)) if c in now[t] - hands[t]), -1)
                    if c in left and holder not in (-1, o):
                        self.hands.append((o, holder, {c}))
            self.tops, self.contents = [], []
        for s, old in enumerate(hands):  # a whole hand passed on (Puppet Master, a swap)
            for t, new in enumerate(now):
                if s != t and old and old <= new:
                    self.hands.append((s, t, set(old)))
        if p is None:
            return
        kind = p.get("kind") or p.get("step")
        if kind == "scry":  # "Show it to everyone then add it to your hand" (rulebook)
            taken = next(c for c in now[seat] - hands[seat] if state.kind[c] == action - CHOOSE)
            for o in range(len(now)):
                if o != seat:
                    self.hands.append((o, seat, {taken}))
        if kind in ("evil_eye", "ouija", "hail"):
            lookers = [p["player"]] if kind != "hail" else range(len(now))
            for o in lookers:
                for t in [p["target"]] if kind != "hail" else range(len(now)):
                    if t not in (o, p["player"]) and hands[t] & now[t]:
                        self.hands.append((o, t, hands[t] & now[t]))
        elif kind == "steal" and p["card"] in now[p["seat"]]:
            self.hands.append((p["victim"], p["seat"], {p["card"]}))
        elif kind in ("nerd_keep", "nerd_top", "alchemy"):
            put = [c for c in state.deck if c not in deck]
            if put or kind == "alchemy":
                moved = hands[seat] - now[seat] if kind == "alchemy" else set(p["cards"])
                self.tops.append((seat, {i: c for i, c in enumerate(state.deck) if c in moved}))
        elif (kind == "scry" or (kind == "perk" and p.get("perk") == SQUIRREL)) and not any(
            now[t] - hands[t] for t in range(len(now)) if t != seat
        ):  # a search, unless another seat drew after it in the same move (it lapses then)
            self.contents.append((seat, set(state.deck)))

    def check(self, truth: Any, det: Any, observer: int) -> None:
        kind_of = truth.kind if hasattr(truth, "kind") else truth.config.kinds
        for o, t, ids in self.hands:
            if o == observer:
                want = Counter(kind_of[c] for c in ids)
                have = Counter(kind_of[c] for c in det.hands[t])
                assert not want - have, f"seat {o} saw seat {t} hold {want}, the determinisation gives {have}"
        for o, at in self.tops:
            if o == observer:
                for i, c in at.items():
                    assert kind_of[det.deck[i]] == kind_of[c], f"seat {o} put a card at deck place {i}"
        for o, ids in self.contents:
            if o == observer:
                want = Counter(kind_of[c] for c in ids)
                assert not want - Counter(kind_of[c] for c in det.deck), f"seat {o} searched the deck"


# --- the property ------------------------------------------------------------------------
def _check_all(spec_name: str, truth: State, notes: Any, salt: int) -> int:
    checked = 0
    for observer in range(truth.num_players):
        det = truth.clone()
        det.resample_hidden(observer, Rng(salt * 31 + observer))
        assert det.view(observer) == truth.view(observer)
        assert det.view(None) == truth.view(None)
        det.check_invariants()
        notes.check(truth, det, observer)
        if spec_name == "crazy_cultists":
            assert crazy_shown(det, observer) == crazy_shown(truth, observer)
        elif spec_name == "trash_cult":
            assert trash_shown(det, observer) == trash_shown(truth, observer)
        checked += 1
    return checked


def _play_and_check(game: str, players: int, seed: int, every: float, dark: bool = False) -> int:
    spec = load_game(game)
    chosen: dict[str, Any] = {"dark_powers": True} if dark else {}
    if (game, players) == ("crazy_cultists", 2):
        chosen["two_players"] = True  # CC-2: 2 seats only behind the sweep-variant switch
    config = spec.make_config(chosen) if chosen else None
    state = spec.new_state(config, players, seed)
    bots = [make_bot(spec, "heuristic" if s % 2 else "random", seed + s) for s in range(players)]
    pick = random.Random(seed)
    notes = TrickyNotes() if game == "tricky_cultists" else HandNotes()
    checked = 0
    while not state.is_terminal():
        if pick.random() < every:
            checked += _check_all(game, state, notes, pick.randrange(1 << 30))
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0]
        notes.watch(state, seat, action)
        state.apply(seat, action)
        if isinstance(notes, HandNotes):
            notes.after(state)
    return checked


@SETTINGS
@given(seed=st.integers(0, 1 << 32))
def test_tricky_cultists_determinisations_keep_to_what_each_seat_saw(seed: int) -> None:
    assert _play_and_check("tricky_cultists", 4, seed, every=0.25) > 0


@SETTINGS
@given(seed=st.integers(0, 1 << 32), players=st.sampled_from([2, 3, 4]))
def test_crazy_cultists_determinisations_keep_to_what_each_seat_saw(seed: int, players: int) -> None:
    _play_and_check("crazy_cultists", players, seed, every=0.2)


@SETTINGS
@given(seed=st.integers(0, 1 << 32), players=st.sampled_from([2, 3, 4]))
def test_crazy_cultists_with_dark_powers_determinisations_keep_to_what_each_seat_saw(
    seed: int, players: int
) -> None:
    """CC-10's Scrying Bones (a take shown to everyone) and Forbidden Alchemy (cards put back
    on top, then drawn) add what a seat knows of cards it cannot see."""
    _play_and_check("crazy_cultists", players, seed, every=0.3, dark=True)


@SETTINGS
@given(seed=st.integers(0, 1 << 32), players=st.sampled_from([2, 3, 4]))
def test_trash_cult_determinisations_keep_to_what_each_seat_saw(seed: int, players: int) -> None:
    _play_and_check("trash_cult", players, seed, every=0.2)


def test_the_issues_case_seat_0_remembers_the_pack_it_passed() -> None:
    """Issue 16: seat 0 (Start Player) saw all five pack cards; seats 1 and 2 kept two of
    them. Every determinisation must give seats 1 and 2 agendas among those five."""
    spec = load_game("tricky_cultists")
    for seed in range(20):
        state = spec.new_state(None, 4, seed)
        handed = set(state.pack)
        for _ in range(3):
            state.apply(state.actor, state.legal_actions(state.actor)[0])  # keep
        assert state.phase == DRAFT and state.actor == 3
        for salt in range(10):
            det = state.clone()
            det.resample_hidden(0, Rng(salt))
            assert {det.agendas[1], det.agendas[2]} <= handed - {state.agendas[0]}
            assert set(det.pack) <= handed
            assert det.agendas[0] == state.agendas[0]


@pytest.mark.parametrize("salt", range(5))
def test_a_revealed_void_holds_until_a_codex_card_comes_in(salt: int) -> None:
    """A seat that could not follow Red holds no Red in any determinisation; after a Green
    take it may hold at most one (TK-7)."""
    from tests.tricky_cultists.setups import play, round_position

    state = round_position(
        hands=(
            ["Red 13", "Green 9", "Blue 5"],
            ["Blue 2", "Blue 3", "Blue 4"],
            ["Red 2", "Red 3", "Red 4"],
            ["Red 5", "Red 6", "Green 2"],
        ),
        tops=(2, 2, 2, 1),
        codex={1: ["Red 1", "Red 7", "Red 8"]},
    )
    play(state, "Red 13", "Blue 2")  # seat 1 shows it has no Red
    assert state.suit_limits[1] == [[1 << 1, 0]]
    for observer in (0, 2, 3):
        det = state.clone()
        det.resample_hidden(observer, Rng(salt * 7 + observer))
        assert not any(c // 13 == 1 for c in det.hands[1])
    state.suit_limits[1] = [[1 << 1, 1]]  # as after one Codex card taken into hand
    state.hands[1] = sorted([*state.hands[1], state.codex[1].pop()])  # Red 8 comes in
    state.check_invariants()
    det = state.clone()
    det.resample_hidden(0, Rng(salt))
    assert sum(1 for c in det.hands[1] if c // 13 == 1) <= 1


def test_crazy_cultists_remembers_the_hand_an_evil_eye_showed() -> None:
    """Seat 0 saw seat 1's whole hand and took the Favor 4: seat 1 holds the rest of what
    was shown in every world seat 0 could be in, until seat 1 plays it. The cards seat 1
    drew back up afterwards are hidden from seat 0 and may be anything."""
    from tests.crazy_cultists.tables import names, pass_window, table

    state = table(hands={0: ["evil_eye"], 1: ["favor_4", "favor_1"]})
    act(state, 0, "play Evil Eye on seat 1")
    pass_window(state)
    act(state, 0, "take Favor 4 from their hand")
    assert state.to_act() == [1] and "favor_1" in names(state, state.hands[1])  # not played yet
    for salt in range(10):
        det = state.clone()
        det.resample_hidden(0, Rng(salt))
        assert "favor_1" in names(det, det.hands[1])
        # seat 1 knows seat 0 holds the Favor 4 it took
        det = state.clone()
        det.resample_hidden(1, Rng(salt))
        assert "favor_4" in names(det, det.hands[0])
