"""Round setup: the deal (TK-1), teams and Start Player (TK-2), the draft (TK-4), the reveal (TK-5)."""

from __future__ import annotations

from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.cards import AGENDAS
from tests.support.positions import act, legal_labels

from .setups import card, draft_position, play, round_position


def test_tk1_deck_is_52_cards_in_four_suits_of_13_with_book_values():
    """TK-1: suits Blue, Red, Green, Purple, ranks 1-13; value (14 - rank) // 2."""
    state = GAME.new_state(None, 4, seed=3)
    cfg = state.config
    assert cfg.cards == 52 and cfg.suits == ("Blue", "Red", "Green", "Purple")
    assert cfg.card_names[card("Red 5")] == "Red 5"
    assert cfg.card_values[card("Red 5")] == 4  # the book's example
    assert cfg.card_values[card("Green 13")] == 0
    assert cfg.card_values[card("Purple 1")] == 6
    assert [len(h) for h in state.hands] == [10] * 4
    assert [len(c) for c in state.codex] == [3] * 4
    assert sorted(c for z in [*state.hands, *state.codex] for c in z) == list(range(52))


def test_tk2_round_r_start_player_is_seat_r_minus_1():
    """TK-2: after round 1 (Start Player seat 0) the next round starts with seat 1 drafting."""
    state = round_position()
    assert state.start == 0
    play(state, "Blue 13", "Blue 2", "Blue 3", "Blue 4")
    assert (state.round, state.start, state.phase, state.actor) == (1, 1, "draft", 1)
    assert len(state.pack) == 5


def test_tk2_partners_share_the_result():
    """TK-2: seats 0 and 2 against 1 and 3; both partners of the winning team get 1."""
    state = round_position(round_index=3, tops=(9, 0, 0, 0))
    play(state, "Blue 13", "Blue 2", "Blue 3", "Blue 4")
    assert state.is_terminal()
    assert state.winners() == [0, 2]
    assert state.returns() == [1.0, 0.0, 1.0, 0.0]


def test_tk4_start_player_gets_five_keeps_one_and_passes_the_rest_left():
    """TK-4: the pack shrinks by one per kept agenda and moves left; leftovers go out."""
    state = GAME.new_state(None, 4, seed=5)
    state.log = []
    assert (state.phase, state.actor, len(state.pack)) == ("draft", 0, 5)
    labels = legal_labels(state, 0)
    assert labels[-1] == "decline an agenda (take a Suspicion)"
    assert len(labels) == 6 and all(label.startswith("keep ") for label in labels[:5])
    act(state, 0, labels[0])
    assert (state.actor, len(state.pack)) == (1, 4)
    assert state.agendas[0] >= 0


def test_tk4_declining_takes_a_suspicion_and_passes_the_whole_pack():
    """TK-4: a seat may decline; it takes a Suspicion and the next seat gets every card."""
    state = draft_position(
        {0: "Win Most Tricks"}, ["Win No Tricks", "Clean Hands", "Win Last Trick", "Lead First Trick"]
    )
    act(state, 1, "decline an agenda (take a Suspicion)")
    assert state.suspicion == [0, 1, 0, 0]
    assert state.agendas[1] == -1 and len(state.pack) == 4 and state.actor == 2
    act(state, 2, "keep Clean Hands")
    act(state, 3, "keep Win No Tricks")
    assert state.phase != "draft"
    assert sorted(AGENDAS[a % 8] for a in state.agenda_out) == sorted(
        [
            "Win Last Trick",
            "Lead First Trick",
            "Choose Bonus Suit",
            "Win Exactly Three",
            "Trigger Most Abilities",
        ]
    )


def test_tk4_choices_stay_secret_until_every_seat_has_drafted():
    """TK-4 / G-3: only the drafter sees the pack, nobody sees another's unrevealed agenda."""
    state = draft_position(
        {0: "Win Most Tricks", 1: "Clean Hands"}, ["Win No Tricks", "Win Last Trick", "Win Exactly Three"]
    )
    for viewer in (None, 1, 2, 3):
        assert state.view(viewer)["seats"][0]["agenda"] == ""
    assert state.view(0)["seats"][0]["agenda"] == "Win Most Tricks"
    assert state.view(2)["pack"] == ["Win Exactly Three", "Win Last Trick", "Win No Tricks"]
    assert state.view(3)["pack"] == [] and state.view(3)["pack_size"] == 3
    act(state, 2, "keep Win No Tricks")
    act(state, 3, "keep Win Last Trick")
    for viewer in (None, 0, 1, 2, 3):
        seats = state.view(viewer)["seats"]
        assert [s["agenda"] for s in seats] == [
            "Win Most Tricks",
            "Clean Hands",
            "Win No Tricks",
            "Win Last Trick",
        ]
    assert [e.text for e in state.log if e.kind == "reveal"] == [
        "seat 0 reveals Win Most Tricks",
        "seat 1 reveals Clean Hands",
        "seat 2 reveals Win No Tricks",
        "seat 3 reveals Win Last Trick",
    ]
    assert not any("Win" in e.text for e in state.log if e.kind == "draft")  # commits stay secret


def test_tk5_start_player_leads_when_nobody_took_lead_first_trick():
    """The book: without Lead First Trick the Start Player leads the first trick."""
    state = draft_position(
        {2: "Win Most Tricks", 3: "Clean Hands", 0: "Win No Tricks"},
        ["Win Last Trick", "Win Exactly Three"],
        round_index=2,
    )
    act(state, 1, "keep Win Last Trick")
    assert (state.phase, state.actor, state.leader, state.turn) == ("play", 2, 2, 1)


def test_tk5_lead_first_trick_leads_and_takes_a_suspicion_at_reveal():
    """TK-3 / TK-5: Lead First Trick's holder leads trick 1 and gains one Suspicion."""
    state = draft_position(
        {0: "Win Most Tricks", 1: "Clean Hands", 2: "Lead First Trick"}, ["Win Last Trick", "Win No Tricks"]
    )
    act(state, 3, "keep Win Last Trick")
    assert (state.phase, state.actor, state.leader) == ("play", 2, 2)
    assert state.suspicion == [0, 0, 1, 0]


def test_tk5_first_in_turn_order_from_start_player_leads_when_two_could():
    """TK-5: with two Lead First Trick cards (agenda_copies=2), the first from the Start Player leads."""
    config = {"agenda_copies": 2}
    state = draft_position(
        {2: "Win Most Tricks", 3: "Lead First Trick", 0: "Clean Hands"},
        ["Lead First Trick", "Win No Tricks"],
        round_index=2,
        config=config,
    )
    act(state, 1, "keep Lead First Trick")
    assert state.leader == 3 and state.actor == 3  # order 2, 3, 0, 1: seat 3 before seat 1
    assert state.suspicion == [0, 1, 0, 1]  # both took Lead First Trick's Suspicion


def test_tk5_choose_bonus_suit_picks_at_reveal_first_in_turn_order():
    """TK-5: the first Choose Bonus Suit holder from the Start Player picks; the pick is a decision."""
    config = {"agenda_copies": 2}
    state = draft_position(
        {2: "Lead First Trick", 3: "Choose Bonus Suit", 0: "Win No Tricks"},
        ["Choose Bonus Suit", "Clean Hands"],
        round_index=2,
        config=config,
    )
    act(state, 1, "keep Choose Bonus Suit")
    assert (state.phase, state.actor) == ("bonus", 3)  # order 2, 3, 0, 1
    assert legal_labels(state, 3) == [
        "bonus suit Blue",
        "bonus suit Red",
        "bonus suit Green",
        "bonus suit Purple",
    ]
    act(state, 3, "bonus suit Green")
    assert state.bonus == 2
    assert state.view(None)["bonus_suit"] == "Green"
    assert (state.phase, state.actor, state.turn) == ("play", 2, 1)  # Lead First Trick leads
