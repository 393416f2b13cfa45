"""Simulation matches the engines' own play loop; aggregation counts what it is given."""

from __future__ import annotations

import random

import pytest

from services.balance.sweeps.aggregate import aggregate, game_rows
from services.balance.sweeps.facts import facts_hook
from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.report import _cell_section
from services.balance.sweeps.simulate import pack, simulate_chunk, unpack
from services.balance.sweeps.spec import parse_spec
from services.engines.core.play import play_to_end
from services.engines.registry import available_games, load_game
from services.engines.tricky_cultists.cards import AGENDAS

GAMES = available_games()
TWO = {"two_players": True}  # CC-2: Crazy Cultists at 2 players is the sweep variant


@pytest.mark.parametrize("game", GAMES)
def test_facts_hooks_read_public_state(game):
    gspec = load_game(game)
    hook = facts_hook(game)
    assert hook is not None
    n = gspec.default_players
    bots = ["random"] * n
    state, rec = play_to_end(gspec, gspec.make_config({"max_turns": 200}), n, 7, bots, True)
    facts = hook(state, rec.actions, bots)
    for labels in facts["groups"].values():
        assert len(labels) == n
    for seats in facts["played"].values():
        assert seats and all(0 <= s < n for s in seats)
    if game == "trash_cult":
        assert set(facts["groups"]["cult"]) <= {"Raccoon", "Skunk", "Squirrel", "Rat", "none"}
    if game == "tricky_cultists":
        assert facts["groups"]["team"] == ["team 0", "team 1", "team 0", "team 1"]
        assert facts["groups"]["partnership"] == ["random+random"] * 4
        assert facts["played"]  # every round's kept agendas
        keeps = sum(1 for _seat, action in rec.actions if state.action_detail(action)["kind"] == "keep")
        assert sum(tried for _met, tried in facts["outcomes"].values()) == keeps
    if game == "crazy_cultists":
        assert facts["played"]


def _result(cell: int, start: int, winners: list[list[int]], turns: list[int]) -> dict:
    return {
        "chunk": f"{cell}-{start}",
        "cell": cell,
        "start": start,
        "games": len(winners),
        "winners": winners,
        "turns": turns,
        "decisions": [t * 3 for t in turns],
        "capped": [int(not w) for w in winners],
        "facts": [],
    }


def test_aggregate_counts_fixed_results():
    spec = parse_spec({"game": "crazy_cultists", "config": TWO, "games": 8, "players": [2], "chunk": 4,
                       "grid": {"variant": ["base", "beast"]}})  # fmt: skip
    results = [
        # cell 0 (base): seat 0 wins 6 of 8, one draw
        _result(0, 0, [[0], [0], [1], [0]], [10, 12, 14, 16]),
        _result(0, 4, [[0], [0], [], [0]], [10, 10, 500, 20]),
        # cell 1 (beast): seat 1 wins every game
        _result(1, 0, [[1]] * 4, [5] * 4),
        _result(1, 4, [[1]] * 4, [5] * 4),
    ]
    agg = aggregate(spec, results)
    base, beast = agg["cells"]
    assert agg["games_counted"] == agg["games_requested"] == 16
    assert [s["wins"] for s in base["seats"]] == [6, 1]
    assert base["fair_share"] == pytest.approx(7 / 16)
    assert base["draws"]["wins"] == 1 and base["capped"]["wins"] == 1
    assert base["first_seat_advantage"]["advantage"] == pytest.approx(6 / 8 - 7 / 16)
    assert base["length"]["max"] == 500 and base["length"]["median"] == 13.0
    assert [s["wins"] for s in beast["seats"]] == [0, 8]
    assert beast["tests"]["seat"]["chi2"] == pytest.approx(8.0)  # (0-4)²/4 + (8-4)²/4
    assert beast["representative"]["winners"] == [1] and beast["representative"]["seat"] == 1
    # a pooled variant row per (variant, players)
    assert [(v["variant"], v["players"], v["games"]) for v in agg["variants"]] == [
        ("variant=base", 2, 8),
        ("variant=beast", 2, 8),
    ]
    # order of arrival does not matter
    shuffled = results[:]
    random.Random(1).shuffle(shuffled)
    assert aggregate(spec, shuffled) == agg
    rows = list(game_rows(spec, shuffled))
    assert [(r["cell"], r["game_index"]) for r in rows][:3] == [(0, 0), (0, 1), (0, 2)]
    assert rows[6]["winners"] == "" and rows[6]["capped"] == 1


def test_bh_flags_the_lopsided_cell_only():
    spec = parse_spec({"game": "crazy_cultists", "config": TWO, "games": 200, "players": [2], "chunk": 200,
                       "grid": {"variant": ["base", "beast"]}})  # fmt: skip
    fair = [[g % 2] for g in range(200)]  # seats alternate: exactly fair
    lopsided = [[0] if g % 10 else [1] for g in range(200)]  # seat 0 wins 90 %
    agg = aggregate(spec, [_result(0, 0, fair, [9] * 200), _result(1, 0, lopsided, [9] * 200)])
    assert [c["flagged"] for c in agg["cells"]] == [False, True]
    assert agg["tests"]["flagged"] == [
        {
            "cell": 1,
            "test": "seat",
            "p": agg["cells"][1]["tests"]["seat"]["p"],
            "p_adj": pytest.approx(0, abs=1e-6),
        }
    ]


def test_chunk_results_pack_and_local_pool_matches_single_process():
    spec = parse_spec({"game": "tricky_cultists", "games": 24, "chunk": 8, "seed": 11,
                       "lineups": [["heuristic", "random", "random", "random"]]})  # fmt: skip
    one = simulate_chunk(spec, chunks(spec)[0])
    assert one is not None and unpack(pack(one)) == one
    pooled = simulate_local(spec, processes=2)
    single = simulate_local(spec, processes=1)
    assert aggregate(spec, pooled) == aggregate(spec, single)
    assert simulate_chunk(spec, chunks(spec)[0], should_stop=lambda: True) is None


@pytest.mark.parametrize("game", ["tricky_cultists", "trash_cult"])
def test_a_chunk_stopped_part_way_plays_on_from_the_games_it_kept(game):
    """A chunk that gave way to the nightly keeps its finished games (`progress`, stored
    packed by jobs.play_chunk) and its next run plays only the rest: the result equals an
    unbroken run's, and the games kept are not played again. Trash Cult's chunks are
    played with their hands watched (cards.py), Tricky Cultists' with facts only."""
    spec = parse_spec({"game": game, "games": 9, "chunk": 9, "seed": 4, "lineups": ["heuristic"]})
    (chunk,) = chunks(spec)
    whole = simulate_chunk(spec, chunk)
    assert whole is not None
    progress: dict = {}
    # Stops once three games are in (asked before each game and between decisions).
    assert simulate_chunk(spec, chunk, should_stop=lambda: len(progress["winners"]) >= 3,
                          poll_seconds=0, progress=progress) is None  # fmt: skip
    assert len(progress["winners"]) == 3
    kept = unpack(pack(progress))  # as it comes back from Redis
    assert kept["winners"] == whole["winners"][:3] and kept["facts"] == whole["facts"][:3]
    asked: list[int] = []

    def count_games() -> bool:  # records how many games were in each time it is asked
        asked.append(len(kept["winners"]))
        return False

    resumed = simulate_chunk(spec, chunk, should_stop=count_games, poll_seconds=0, progress=kept)
    assert resumed is not None
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {
        k: v for k, v in whole.items() if k != "seconds"
    }
    assert min(asked) == 3, "the kept games were played again"


def test_tricky_cultists_sweeps_report_agenda_success_rates():
    """Per agenda: rounds kept, rounds met, a Wilson interval; Lead First Trick is always met."""
    spec = parse_spec(
        {"game": "tricky_cultists", "games": 8, "chunk": 4, "seed": 5, "lineups": ["heuristic"]}
    )
    (cell,) = aggregate(spec, simulate_local(spec, processes=1))["cells"]
    rows = {o["label"]: o for o in cell["outcomes"]}
    assert rows and set(rows) <= set(AGENDAS)
    assert sum(o["trials"] for o in rows.values()) <= 8 * 4 * 4  # at most one per seat and round
    for o in rows.values():
        assert 0 <= o["wins"] <= o["trials"] and o["lo"] <= o["rate"] <= o["hi"]
    if "Lead First Trick" in rows:
        assert rows["Lead First Trick"]["rate"] == 1.0
    assert "Agenda success" in _cell_section(cell, "")


def test_bot_strength_is_reported_but_never_flags_a_cell():
    spec = parse_spec({"game": "crazy_cultists", "config": TWO, "games": 100, "players": [2], "chunk": 100,
                       "lineups": [["heuristic", "random"]]})  # fmt: skip
    (cell,) = spec.cells()
    # the heuristic bot wins every game; rotation spreads those wins evenly over the seats
    winners = [[cell.seat_bots(g).index("heuristic")] for g in range(100)]
    (c,) = aggregate(spec, [_result(0, 0, winners, [9] * 100)])["cells"]
    assert [b["rate"] for b in c["bots"]] == [1.0, 0.0]
    assert c["tests"]["bot"]["p"] < 1e-10 and c["tests"]["bot"]["balance"] is False
    assert c["tests"]["seat"]["p"] == 1.0
    assert not c["flagged"] and c["flags"] == []
