"""Small fixed positions with one clearly best move, which IS-MCTS must find.

Each is written through the JSON state form (tests/support/positions.py, via the games'
table helpers), and each test first checks on the real position that the move is what the
test says it is: the winning one, where the alternatives do not win now.
"""

from __future__ import annotations

from services.engines.core.bots import make_bot
from services.engines.core.game import State
from services.engines.tricky_cultists import GAME as TRICKY
from services.engines.tricky_cultists.rules import PLAY
from tests.crazy_cultists.tables import table as crazy_table
from tests.support.positions import act, legal_labels, position
from tests.trash_cult.tables import table as trash_table

BUDGET = "ismcts:iterations=60,depth=8"


def _ismcts_label(state: State, seat: int, spec_bot: str = BUDGET, seed: int = 1) -> str:
    legal = state.legal_actions(seat)
    return state.action_label(make_bot(state.spec, spec_bot, seed).choose(state, seat, legal))


def _wins_after(state: State, seat: int, label: str) -> bool:
    after = state.clone()
    act(after, seat, label)
    return after.is_terminal() and seat in after.winners()


def test_crazy_cultists_lights_the_winning_candle():
    """Seat 0 holds 4 of 5 candles and a 4 on its stack toward 6: only Favor 2 wins now
    (Favor 1 falls short; the Hex would only slow the rival, who is one candle away too)."""
    state = crazy_table(
        3,
        hands={0: ["favor_2", "favor_1", "hex_o_rama"]},
        stacks={0: ["favor_4"], 1: ["favor_4", "favor_1"]},
        candles=[4, 4, 1],
    )
    assert _wins_after(state, 0, "play Favor 2")
    assert not _wins_after(state, 0, "play Favor 1")
    for seed in (1, 2, 3):
        assert _ismcts_label(state, 0, seed=seed) == "play Favor 2"


def test_trash_cult_finds_the_winning_snackrifice():
    """Seat 0 (Raccoon) has its Cult Member and 5 of 6 Pizzas, one action left, two Rat
    Hostages and a Pizza in the trash: snackrificing the Rats for the Rat perk takes that
    Pizza into the Shrine and wins at the end of the turn (a Hide covers the chaos card)."""
    state = trash_table(
        2,
        cults=["Raccoon", "Skunk"],
        hands={0: ["Hide", "Pie", "Squirrel"], 1: ["Cookie", "Donut", "Cookie"]},
        members={0: ["Raccoon"], 1: ["Skunk"]},
        hostages={0: ["Rat", "Rat", "Skunk", "Skunk"]},
        shrine={0: ["Pizza"] * 5, 1: ["Pie", "Pie"]},
        trash=["Pizza"],
        chaos=["Trashnado"],
        actions_left=1,
    )
    assert "snackrifice 2 Rat Hostages" in legal_labels(state, 0)
    assert not any(
        _wins_after(state, 0, label) for label in legal_labels(state, 0) if "Rat Hostages" not in label
    )
    for seed in (1, 2, 3):
        assert _ismcts_label(state, 0, seed=seed) == "snackrifice 2 Rat Hostages"


def _tricky_last_trick() -> State:
    """The last trick of the last round: seats 0-2 have played Blue 4, Blue 3, Blue 1, and
    seat 3 (team 1) holds Blue 5 and Blue 2, its team 2 VP behind. Blue 5 takes the trick
    (4 VP) and the game; Blue 2 hands seat 0 the trick (5 VP) and the game."""
    doc = TRICKY.new_state(None, 4, 0).to_json()
    blue = list(range(13))  # Blue 1..13 are ids 0..12 (TK-1)
    rest = [c for c in range(52) if c not in blue[:5]]
    codex, piles = rest[:3], rest[3:]
    won = [piles[0:12], piles[12:24], piles[24:36], piles[36:44]]
    doc.update(
        round=3,
        start=3,
        phase="play",
        actor=3,
        leader=0,
        hands=[[], [], [], [blue[1], blue[4]]],
        codex=[codex, [], [], []],
        undealt=[],
        trick=[blue[3], blue[2], blue[0]],
        won=won,
        last_winner=3,
        final_trick=False,
        trump=-1,
        bonus=-1,
        suspicion=[0, 0, 0, 0],
        abilities=[3, 3, 3, 2],
        agendas=[-1, -1, -1, -1],
        pack=[],
        agenda_out=list(range(8)),
        stealers=[],
        turn=40,
    )
    values = TRICKY.make_config(None).card_values
    so_far = [sum(values[t] for t in pile[::4]) for pile in won]
    adjust = 2 - ((so_far[0] + so_far[2]) - (so_far[1] + so_far[3]))  # team 0 leads by 2
    doc["breakdown"] = [[[0, adjust, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]] + [
        [[0, 0, 0, 0] for _ in range(4)] for _ in range(2)
    ]
    doc["agenda_met"] = [[[-1, None]] * 4 for _ in range(3)]  # no agendas kept in those rounds
    return position(TRICKY, players=4, **{k: v for k, v in doc.items() if k in TRICKY.state_class.FIELDS})


def test_tricky_cultists_takes_the_winning_trick():
    state = _tricky_last_trick()
    win, lose = state.action_label(PLAY + 4), state.action_label(PLAY + 1)
    assert sorted(legal_labels(state, 3)) == sorted([win, lose])
    assert _wins_after(state, 3, win)
    after = state.clone()
    act(after, 3, lose)
    assert after.is_terminal() and 3 not in after.winners()
    for seed in (1, 2, 3):
        assert _ismcts_label(state, 3, seed=seed) == win


def test_best_moves_are_found_with_random_rollouts_too():
    """The search, not the guide, finds them: no prior, random rollouts to the end."""
    state = crazy_table(
        3,
        hands={0: ["favor_2", "favor_1", "hex_o_rama"]},
        stacks={0: ["favor_4"], 1: ["favor_4", "favor_1"]},
        candles=[4, 4, 1],
    )
    assert _ismcts_label(state, 0, "ismcts:iterations=60,depth=0,prior=0") == "play Favor 2"
    assert _ismcts_label(_tricky_last_trick(), 3, "ismcts:iterations=30,depth=0,prior=0") == "play Blue 5"
