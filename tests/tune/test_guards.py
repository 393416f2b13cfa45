"""The tuner's guard rails, side-effect table and `no_change_needed`, on the planted game.

tests/support/planted_game.py: seat 0 wins 35 % + 5 % x seat0_edge of the games that are
not stalled; each point of `stall` draws 10 % of games first. So a target on seat 0's win
rate can be hit more exactly by stalling (making draws) than by the edge alone: the
objective's optimum breaks the default `draw_rate` guard (5 %), and the tune must choose
the best config that keeps it.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.balance.sweeps.spec import SpecError
from services.balance.tune.evaluate import LocalRunner
from services.balance.tune.report import headline, write_report
from services.balance.tune.run import run_tune
from services.balance.tune.spec import parse_tune_spec

# Seat 0's rate is 0.35 at edge 0, 0.40 at edge 1 (no stall); the target's middle (0.315) is
# met only by stalling: edge 0 stall 1 gives 0.315 (10 % draws), edge 1 stall 2 gives 0.32.
STALLING: dict[str, Any] = {
    "game": "planted",
    "seed": 5,
    "search": {"seat0_edge": [0, 1, 2], "stall": [0, 1, 2]},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.25, 0.38]}],
    "budget": 9000,
    "racing": {"games": 300, "eta": 3, "rungs": 2, "batch": 9},
    "confirm": 1500,
}
# The printed rules: edge 7 (seat 0 wins 70 %), no stall.


def test_a_guard_breaking_optimum_is_not_chosen(planted):
    spec = parse_tune_spec(STALLING)
    summary = run_tune(spec, LocalRunner(1))
    best = summary["best"]
    assert best["config"] == {"seat0_edge": 0, "stall": 0}  # 35 %: inside the target, no draws
    assert all(g["holds"] for g in best["guards"])
    # The stalling configs were measured and seen to break the draw guard.
    stalled = [t for t in summary["history"] if t["state"] == "complete" and t["config"].get("stall")]
    assert stalled
    conf = best["confirmed"]
    assert conf["verdict"] in ("confirmed", "unproven")
    assert {g["guard"] for g in conf["guards"]} == {"draw_rate", "cap_rate", "length_change"}
    assert all(g["holds"] for g in conf["guards"])
    # The side-effect table: seat 0 dropped from 70 % to 35 % (significant), no draws either side.
    effects = {r["metric"]: r for r in conf["side_effects"]}
    seat0 = effects["seat 0 win rate"]
    assert (
        seat0["significant"]
        and seat0["difference"] < -0.25
        and seat0["lo"] <= seat0["difference"] <= seat0["hi"]
    )
    assert not effects["mean length"]["significant"]  # always 2 turns
    assert "draw rate" not in effects  # no game drawn under either


def test_without_the_draw_guard_the_stalling_optimum_wins(planted):
    """The control: the same tune with the draw guard turned off picks a stalling config,
    and its confirmation's side-effect table flags the draws it makes."""
    spec = parse_tune_spec({**STALLING, "guards": {"draw_rate": None}})
    assert [g.metric for g in spec.guards] == ["cap_rate", "length_change"]
    summary = run_tune(spec, LocalRunner(1))
    best = summary["best"]
    assert best["config"]["stall"] > 0
    effects = {r["metric"]: r for r in best["confirmed"]["side_effects"]}
    draws = effects["draw rate"]
    assert draws["significant"] and draws["difference"] > 0.05 and draws["printed_rules"] == 0


def test_printed_rules_on_target_stop_the_search_and_need_no_change(planted, tmp_path):
    spec = parse_tune_spec(
        {
            **STALLING,
            "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.62, 0.78]}],  # printed: 70 %
        }
    )
    summary = run_tune(spec, LocalRunner(1))
    assert summary["stopped_early"] and not summary["early_stop_overturned"]
    assert summary["trials"] == 0 and summary["search_games"] == STALLING["racing"]["games"]
    assert summary["best"]["config"] == {}
    conf = summary["best"]["confirmed"]
    assert conf["verdict"] == "no_change_needed"
    assert conf["printed_rules"]["meets_every_target"]
    assert any(line.startswith("No change needed") for line in headline(summary))
    assert "No change needed" in write_report(tmp_path, summary).read_text()


def test_printed_rules_on_target_on_confirmation_need_no_change_even_after_a_search(planted):
    """Printed rules whose first look misses a loose-looking target can still meet it on
    the confirmation games; a printed-rules success beats any config the search found."""
    spec = parse_tune_spec(
        {
            **STALLING,
            "search": {"seat0_edge": [6, 7, 8]},
            "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.64, 0.76]}],
            "racing": {"games": 2, "eta": 3, "rungs": 1, "batch": 3},  # a first look too small to trust
            "budget": 8,
        }
    )
    summary = run_tune(spec, LocalRunner(1))
    assert not summary["stopped_early"]  # the 2-game first look (seed-fixed) missed
    assert summary["trials"] > 0
    assert summary["best"]["confirmed"]["verdict"] == "no_change_needed"


@pytest.mark.parametrize(
    ("guards", "field"),
    [
        ({"draws": 0.1}, "guards.draws"),  # a guard the list lacks
        ({"draw_rate": 0}, "guards.draw_rate"),
        ({"cap_rate": "1%"}, "guards.cap_rate"),
    ],
)
def test_a_bad_guard_is_refused_naming_it(planted, guards, field):
    with pytest.raises(SpecError) as err:
        parse_tune_spec({**STALLING, "guards": guards})
    assert err.value.field == field


def test_default_guards_are_on_every_tune_and_round_trip(planted):
    spec = parse_tune_spec(STALLING)
    assert {g.metric: g.limit for g in spec.guards} == {
        "draw_rate": 0.05,
        "cap_rate": 0.01,
        "length_change": 0.25,
    }
    again = parse_tune_spec(spec.to_dict())
    assert again.guards == spec.guards
    off = parse_tune_spec({**STALLING, "guards": {"length_change": None, "cap_rate": 0.02}})
    assert parse_tune_spec(off.to_dict()).guards == off.guards


def test_a_length_target_drops_the_default_length_guard_unless_named(planted):
    length = [{"metric": "mean_length", "target": [1.5, 2.5]}]
    assert [g.metric for g in parse_tune_spec({**STALLING, "objectives": length}).guards] == [
        "draw_rate",
        "cap_rate",
    ]
    kept = parse_tune_spec({**STALLING, "objectives": length, "guards": {"length_change": 0.5}})
    assert {g.metric: g.limit for g in kept.guards}["length_change"] == 0.5


def test_an_early_stop_the_proof_overturns_searches_after_all(planted):
    """Printed rules on target at the first look (seat 0: 70 %, inside 66-72 %) stop the
    search; when the fresh games cannot confirm them, the tune searches after all."""
    spec = parse_tune_spec(
        {
            **STALLING,
            "search": {"seat0_edge": [6, 7, 8]},
            "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.66, 0.72]}],
            "racing": {"games": 300, "eta": 3, "rungs": 1, "batch": 3},
            "budget": 1500,
        }
    )
    summary = run_tune(spec, LocalRunner(1))
    assert summary["early_stop_overturned"] and not summary["stopped_early"]
    assert summary["trials"] > 0 and summary["best"]["config"]
    assert summary["games"] == summary["search_games"] + summary["confirm_games"]
    assert summary["confirm_games"] > 2 * spec.confirm  # two proofs: the printed rules', then the search's
