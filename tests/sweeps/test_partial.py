"""Per-chunk partial aggregates merge associatively: any grouping and order, one answer."""

from __future__ import annotations

import random

import orjson

from services.balance.sweeps.aggregate import aggregate, aggregate_partials
from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.partial import CellPartial, merge_all, of_chunk
from services.balance.sweeps.spec import parse_spec

from .support import SMALL_SPECS


def test_partials_merged_in_any_grouping_give_the_aggregates_of_the_results():
    for game in ("trash_cult", "tricky_cultists"):  # facts: cults; teams, partnerships, agendas
        spec = parse_spec({**SMALL_SPECS[game], "chunk": 4})
        results = simulate_local(spec, processes=1)
        expected = aggregate(spec, results)
        # Stored form: every chunk's partial through JSON and back, as the workers store it.
        parts = [
            (r["cell"], CellPartial.from_dict(orjson.loads(orjson.dumps(of_chunk(spec, r).to_dict()))))
            for r in results
        ]
        random.Random(3).shuffle(parts)
        assert aggregate_partials(spec, merge_all(spec, parts)) == expected
        # Pre-merged in uneven groups first (as several finishers could), then merged again.
        groups = [parts[i : i + 3] for i in range(0, len(parts), 3)]
        pre = []
        for group in groups:
            for cell, merged in merge_all(spec, group).items():
                pre.append((cell, merged))
        random.Random(4).shuffle(pre)
        assert aggregate_partials(spec, merge_all(spec, pre)) == expected


def test_game_length_figures_from_counts_equal_those_from_the_list():
    part = CellPartial(2)
    lengths = [10, 12, 14, 16, 10, 10, 500, 20, 3]
    part.add_chunk(
        parse_spec({"game": "trash_cult", "games": 9, "players": [2]}).cells()[0],
        {"cell": 0, "start": 0, "games": 9, "winners": [[0]] * 9, "turns": lengths,
         "decisions": [1] * 9, "capped": [0] * 9, "facts": []},
    )  # fmt: skip
    ordered = sorted(lengths)
    assert part.length_quantile(0.5) == 12
    assert part.length_quantile(0.1) == ordered[0] + (ordered[1] - ordered[0]) * 0.8
    mean, lo, hi = part.length_mean_interval()
    assert mean == sum(lengths) / 9 and lo < mean < hi
    assert sum(part.length_histogram()["counts"]) == 9
