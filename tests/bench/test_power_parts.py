"""The power bench measures its parts and games separately (a Crazy Cultists night is too
slow for every run): what a run did not measure keeps its last figures and says when they
were measured, and the discordance's interval covers what the pairs say."""

from __future__ import annotations

import random

from bench import power


def test_a_partial_run_keeps_the_other_games_figures_with_their_dates() -> None:
    previous = {
        "coupled": {"keyed": {"discordant_share_of_independent": 0.51}},
        "nightly_aa": {"game": "trash_cult", "games_per_cell": 200, "false_alarm_rate": 0.0},
        "nightly_planted": {"trash_cult": {"power": 1.0}, "tricky_cultists": {"power": 1.0}},
        "measured_at": "2026-12-03 07:51 UTC",
        "load_average_at_end": [8.76, 9.85, 9.85],
    }
    out = {"nightly_planted": {"crazy_cultists": {"power": 0.5}}}
    measured = {"nightly_planted.crazy_cultists": {"at": "now"}}
    power._keep_previous(out, measured, previous)
    assert set(out["nightly_planted"]) == {"crazy_cultists", "trash_cult", "tricky_cultists"}
    assert out["nightly_planted"]["crazy_cultists"] == {"power": 0.5}  # this run's, not replaced
    assert out["nightly_aa"] == {"trash_cult": {"games_per_cell": 200, "false_alarm_rate": 0.0}}
    assert out["coupled"] == previous["coupled"]
    stamps = out["parts_measured"]
    assert stamps["nightly_planted.crazy_cultists"] == {"at": "now"}
    assert stamps["nightly_planted.trash_cult"]["at"] == "2026-12-03 07:51 UTC"
    assert stamps["coupled"]["load_average_at_end"] == [8.76, 9.85, 9.85]


def test_the_discordance_interval_brackets_the_share_and_narrows_with_games() -> None:
    draw = random.Random(5)

    def pairs(n: int) -> list[tuple[bool, bool]]:
        # Base wins half; the variant keeps the base's outcome 3 times in 4.
        out = []
        for _ in range(n):
            a = draw.random() < 0.5
            out.append((a, a if draw.random() < 0.75 else not a))
        return out

    small, large = pairs(400), pairs(6400)

    def share(ps: list[tuple[bool, bool]]) -> float:
        p_a = sum(a for a, _ in ps) / len(ps)
        p_b = sum(b for _, b in ps) / len(ps)
        return sum(a != b for a, b in ps) / len(ps) / (p_a * (1 - p_b) + p_b * (1 - p_a))

    lo_s, hi_s = power.discordance_interval(small)
    lo_l, hi_l = power.discordance_interval(large)
    assert lo_s <= share(small) <= hi_s and lo_l <= share(large) <= hi_l
    assert lo_l <= 0.5 <= hi_l  # the true share: 0.25 discordant of 0.5 expected
    assert hi_l - lo_l < (hi_s - lo_s) / 2  # 16 times the games: about a quarter the width
