"""The docs' figure tables, made from bench/results.json, so the docs never claim a figure
the bench did not print.

A table lives in a docs page between two markers,

    <!-- bench:gateway -->
    ...generated, never edited by hand...
    <!-- /bench:gateway -->

and `python -m bench.run --docs` (also run at the end of every bench run) rewrites every
such region in docs/*.md from the results file. tests/bench/test_docs_tables.py checks that
the committed docs equal what this makes from the committed results, so a figure changed by
hand, or a bench run whose results were committed without the docs, fails the tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGION = re.compile(r"(<!-- bench:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)", re.S)
TITLES = {
    "crazy_cultists": "Crazy Cultists",
    "trash_cult": "Trash Cult",
    "tricky_cultists": "Tricky Cultists",
}


class MissingFigures(LookupError):
    """A docs region names figures the results file does not hold."""


def _section(results: dict[str, Any], name: str) -> dict[str, Any]:
    found = results.get(name)
    if not isinstance(found, dict):
        raise MissingFigures(f"bench/results.json has no '{name}' section: run `python -m bench.run {name}`")
    return found


def _when(section: dict[str, Any]) -> str:
    """Where a table's figures came from: the run's time and the machine's load then."""
    load = section.get("load_average_at_end")
    load_text = ", ".join(f"{x:.2f}" for x in load) if load else "not recorded"
    return (
        f"Run of {section.get('measured_at', 'an unrecorded time')}, load average (1, 5, 15 min) {load_text}."
    )


def _targets(section: dict[str, Any]) -> list[str]:
    return [
        # In name order, as results.json keeps them (sort_keys), whether read back or not.
        f"- {'met' if ok else 'TARGET MISSED'}: {name}"
        for name, ok in sorted(section.get("targets", {}).items())
    ]


def gateway_table(results: dict[str, Any]) -> str:
    section = _section(results, "gateway")
    http = section["http"]
    floor = http.get("floor", {})
    ratios = http.get("gateway_cpu_over_floor", {})
    rows = [
        "| phase | moves/s | move p50 (ms) | move p99 (ms) | requests per move | gateway CPU per move (ms) "
        "| floor CPU per move (ms) | gateway / floor | engines, Redis CPU per move (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in ("paced", "paced_half", "unpaced"):
        phase = http[key]
        offered = phase["offered_moves_per_second"]
        cpu = phase["cpu_ms_per_move"]
        engines = sum(ms for part, ms in cpu.items() if part.startswith("engine "))
        base = f"{floor[key]['cpu_ms_per_move']['gateway']:.2f}" if key in floor else "-"
        ratio = f"{ratios[key]:.2f}x" if key in ratios else "-"
        name = f"{offered} offered" if offered else "unpaced"
        rows.append(
            f"| {name} | {phase['moves_per_second']:,.0f} | {phase['move_p50_ms']:.1f} "
            f"| {phase['move_p99_ms']:.1f} | {phase.get('requests_per_move', 2.0):.2f} | {cpu['gateway']:.2f} "
            f"| {base} | {ratio} | {engines:.2f}, {cpu['redis']:.2f} |"
        )
    floor_rows = [
        f"floor at {p['offered_moves_per_second']} offered: {p['moves_per_second']:,.0f} moves/s, "
        f"p50 {p['move_p50_ms']:.1f} ms, p99 {p['move_p99_ms']:.1f} ms"
        for p in floor.values()
    ]
    lines = [*rows, "", _when(section) + " " + "; ".join(floor_rows) + ("." if floor_rows else "")]
    return "\n".join([*lines, "", *_targets(section)]) + "\n"


def grpc_table(results: dict[str, Any]) -> str:
    section = _section(results, "grpc")
    rows = [
        "| game | round trip p50 (ms), Ping / Apply | round trip p99 (ms) | handler p50, p99 (ms) "
        "| engine CPU per call (ms) |",
        "|---|---|---|---|---|",
    ]
    for game, title in TITLES.items():
        if game not in section:
            continue
        kinds = [(title, section[game])]
        if "read_back" in section[game]:
            kinds.append((f"{title}, state read back", section[game]["read_back"]))
        for name, figures in kinds:
            c, h, cpu = figures["client"], figures["server_handler"], figures["cpu_per_call_ms"]
            each = figures.get("cpu_apply_over_ping_by_process", [])
            per_process = f"; each engine {', '.join(f'{r:.2f}x' for r in each)}" if len(each) > 1 else ""
            rows.append(
                f"| {name} | {c['ping_p50_ms']:.3f} / {c['apply_p50_ms']:.3f} ({c['apply_over_ping_p50']:.2f}x) "
                f"| {c['ping_p99_ms']:.3f} / {c['apply_p99_ms']:.3f} ({c['apply_over_ping_p99']:.2f}x) "
                f"| {h['ping_p50_ms']:.3f} / {h['apply_p50_ms']:.3f}, {h['ping_p99_ms']:.3f} / "
                f"{h['apply_p99_ms']:.3f} | {cpu['ping']:.3f} / {cpu['apply']:.3f} "
                f"({figures['cpu_apply_over_ping']:.2f}x{per_process}) |"
            )
    return "\n".join([*rows, "", _when(section), "", *_targets(section)]) + "\n"


def engines_table(results: dict[str, Any]) -> str:
    """Random play compiled and interpreted against OpenSpiel's `crazy_eights`, and the
    bots' speeds (bench/engines.py), all from one run on one pinned core."""
    section = _section(results, "engines")
    compared = section.get("compiled")
    if not isinstance(compared, dict):
        raise MissingFigures(
            "the 'engines' section has no compiled figures: run `python -m bench.run engines`"
        )
    rows = [
        "| game | random decisions/s, compiled / interpreted | vs OpenSpiel | heuristic games/s "
        "| IS-MCTS iterations/s |",
        "|---|---|---|---|---|",
    ]
    for game, title in TITLES.items():
        row = compared.get(game)
        if not isinstance(row, dict):
            continue
        vs = row.get("random_vs_openspiel")
        rows.append(
            f"| {title} | {row['random_decisions_per_second_compiled']:,} / "
            f"{row['random_decisions_per_second_interpreted']:,} ({row['random_speedup']:.2f}x) "
            f"| {f'{vs:.2f}x' if vs is not None else 'not measured'} "
            f"| {row['heuristic_games_per_second_compiled']:,.1f} / "
            f"{row['heuristic_games_per_second_interpreted']:,.1f} ({row['heuristic_speedup']:.2f}x) "
            f"| {row['ismcts_iterations_per_second_compiled']:,.0f} / "
            f"{row['ismcts_iterations_per_second_interpreted']:,.0f} ({row['ismcts_speedup']:.2f}x) |"
        )
    openspiel = compared.get("openspiel_crazy_eights_decisions_per_second")
    nodes = compared.get("openspiel_crazy_eights_nodes_per_second")
    note = (
        (
            f"OpenSpiel's `crazy_eights` ran {openspiel:,} player decisions/s on the same core in this run "
            f"({nodes:,} nodes/s counting its chance nodes, the deal and the draws, which are not decisions)."
            if nodes
            else f"OpenSpiel's `crazy_eights` ran {openspiel:,} nodes/s on the same core in this run "
            "(an older run, counting its chance nodes as decisions)."
        )
        if openspiel
        else f"OpenSpiel was not measured: {compared.get('openspiel_note', 'no note')}."
    )
    return "\n".join([*rows, "", _when(section) + " " + note, "", *_targets(section)]) + "\n"


PROFILE_ROWS = 15


def profile_table(results: dict[str, Any]) -> str:
    """py-spy's top functions (bench/profile_gateway.py), the gateway's beside the floor's."""
    section = _section(results, "gateway_profile")
    columns = [("gateway", "own"), ("gateway", "ours"), ("floor", "own")]
    titles = {"own": "own time", "ours": "its own code, inclusive"}
    head = " | ".join(f"{app}, {titles[kind]} | %" for app, kind in columns)
    rows = [f"| {head} |", "|" + "---|" * (2 * len(columns))]
    for i in range(PROFILE_ROWS):
        cells = []
        for app, kind in columns:
            entries = section[app].get(kind, [])
            name, share = entries[i] if i < len(entries) else ("", None)
            cells += [f"`{name}`" if name else "", f"{share:.1f}" if share is not None else ""]
        rows.append("| " + " | ".join(cells) + " |")
    samples = {app: int(section[app]["samples"][0][1]) for app in ("gateway", "floor")}
    note = (
        f"Shares of {samples['gateway']:,} samples of the gateway's workers and {samples['floor']:,} of the "
        f"floor's, {section['seconds']:g} s each at 250 moves/s offered, 200 tables. "
    )
    return "\n".join([*rows, "", note + _when(section)]) + "\n"


def _percents(rates: dict[str, float]) -> str:
    return " / ".join(f"{rate:.0%}".replace("%", " %") for rate in rates.values())


def drift_table(results: dict[str, Any]) -> str:
    """The nightly drift's error rates (bench/drift.py): A/A false alarms and power."""
    section = _section(results, "drift")
    aa, real, same = section["aa"], section["real_aa"], section["real_same_seeds"]
    sizes = " / ".join(section["power_400_games_per_cell"])
    replay = same["aa_same_seeds"]
    tests = ", ".join(f"{n} {test}" for test, n in sorted(replay["tests"].items()))
    rows = [
        "| what | figure |",
        "|---|---|",
        f"| A/A false-alarm rate: night pairs with any drift (synthetic nights shaped like the suite, "
        f"{aa['games_per_cell']} games/cell, {aa['metrics_per_night']} metrics a night, independent samples) "
        f"| {aa['nights_with_a_false_alarm']} of {aa['pairs']} = **{aa['false_alarm_rate']:.1%}** (target <= 5 %) |",
        f"| real A/A nights ({real['games_per_cell']} games/cell, master seeds "
        f"{', '.join(str(s) for s in sorted({s for pair in real['pairs'] for s in pair['seeds']}))}) "
        f"| {sum(pair['drifted'] for pair in real['pairs'])} drifts over {len(real['pairs'])} pairs "
        f"({real['pairs'][0]['compared']} metrics a pair) |",
        f"| power, seat 0 {sizes} in one 4-player cell, independent nights, 400 games/cell "
        f"| {_percents(section['power_400_games_per_cell'])} |",
        f"| the same at 2,000 games/cell | {_percents(section['power_2000_games_per_cell'])} |",
        f"| the same at 400 games/cell on the same seeds (paired) "
        f"| {_percents(section['power_400_games_per_cell_paired'])} |",
        f"| real Trash Cult night replayed on the nightly's seed ({same['games_per_cell']} games/cell, "
        f"{replay['compared']} metrics) | {replay['drifted']} drifts; tests run: {tests} |",
    ]
    for change, planted in sorted(same.items()):
        if not isinstance(planted, dict) or "cells_flagged" not in planted:
            continue
        rows.append(
            f"| planted change on the same seeds: `{change}` | {planted['metric']} flagged in "
            f"{planted['cells_flagged']} cells ({', '.join(planted['tests'])}); "
            f"{planted['other_drifts']} other drifts |"
        )
    note = f"Power over {section['power_pairs']} night pairs per size; planted: {section['planted']}. "
    return "\n".join([*rows, "", note + _when(section), "", *_targets(section)]) + "\n"


def _rung_row(game: str, players: int, rung: dict[str, Any], extra: str) -> str:
    challenger, incumbent = rung["bots"]
    mu = rung["openskill"]
    low, high = rung["wilson_95"]
    return (
        f"| {TITLES[game]} | {players} | `{challenger}` vs `{incumbent}` | {rung['games']:,} "
        f"| {rung['win_rate']:.1%} | {low:.1%} - {high:.1%} | {mu[challenger]['mu']:.1f} / {mu[incumbent]['mu']:.1f} "
        f"| {rung['seconds']:,.0f} s | {extra} |"
    )


def bots_table(results: dict[str, Any]) -> str:
    """The strength ladder (bench/bots.py): each rung's games, win rate and Wilson interval."""
    section = _section(results, "bots")
    rows = [
        "| game | players | rung | games | win rate | 95% Wilson | OpenSkill mu (challenger / incumbent) "
        "| wall | 4-player game (CPU), IS-MCTS iterations/s, load average |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for game in TITLES:
        part = section.get(game)
        if not part:
            continue
        load = " / ".join(f"{x:.2f}" for x in part["load_average"])
        when = (
            " (carried over from an earlier run)"
            if part.get("carried_over") or part.get("rungs_carried_over")
            else ""
        )
        rows.append(_rung_row(game, part["players"], part["heuristic_vs_random"], f"load {load}{when}"))
        speed = (
            f"{part['four_player_game_cpu_seconds']:.2f} s, {part['ismcts_iterations_per_second']:,}/s, "
            f"load {load}{when}"
        )
        rows.append(_rung_row(game, part["players"], part["ismcts_vs_heuristic"], speed))
        if "policy_vs_heuristic" in part:
            pload = " / ".join(f"{x:.2f}" for x in part.get("policy_load_average", part["load_average"]))
            cpu = (
                f"policy {part['policy_cpu_per_decision_us']:.0f} us vs heuristic "
                f"{part['heuristic_cpu_per_decision_us']:.0f} us CPU a decision ({part['policy_cpu_ratio']:.2f}x), "
                f"load {pload}{' (carried over from an earlier run)' if part.get('carried_over') else ''}"
            )
            rows.append(_rung_row(game, part["players"], part["policy_vs_heuristic"], cpu))
        if "ismcts_policy_vs_ismcts" in part:
            rows.append(_rung_row(game, part["players"], part["ismcts_policy_vs_ismcts"], f"load {pload}"))
    note = f"{section['method']}. Wall time {section['wall_seconds']:,.0f} s for the games measured in that run. "
    return "\n".join([*rows, "", note + _when(section), "", *_targets(section)]) + "\n"


def aggregation_table(results: dict[str, Any]) -> str:
    """Aggregating a sweep (bench/sweep_aggregation.py), and what a 10M-game night costs by it."""
    section = _section(results, "sweep_aggregation")
    small, big = section["sizes"]["100000"], section["sizes"]["1000000"]
    sim, parquet = section["simulation"], section["parquet"]
    per_game = big["chunk_results_mb"] * 1e6 / big["games"], big["partials_mb"] * 1e6 / big["games"]
    rows = [
        "| figure | measured |",
        "|---|---|",
        f"| simulation, Crazy Cultists 4p, heuristic bot in every seat (the nightly's kind) "
        f"| {sim['heuristic_games_per_cpu_second']:,.0f} games per CPU second per process |",
        f"| simulation, same with random bots | {sim['random_games_per_cpu_second']:,.0f} games per CPU second |",
        f"| fold on the workers | {big['fold_cpu_seconds_per_million_games']:.1f} CPU s per million games |",
        f"| finish, 100,000 / 1,000,000 games: merge and paired comparisons "
        f"| {small['merge_seconds']:.1f} s / {big['merge_seconds']:.1f} s wall, of which the paired comparisons "
        f"{small['paired_seconds']:.1f} s / {big['paired_seconds']:.1f} s wall, "
        f"{small['paired_cpu_seconds']:.1f} / {big['paired_cpu_seconds']:.1f} CPU s |",
        f"| peak memory of the finish, 100,000 / 1,000,000 games | {small['merge_peak_rss_mb']:.1f} MB / "
        f"{big['merge_peak_rss_mb']:.1f} MB (ratio {section['memory_ratio_1m_vs_100k']:.2f}), of which "
        f"{small['merge_rss_growth_mb']:.0f} / {big['merge_rss_growth_mb']:.0f} MB for merging and pairing |",
        f"| stored per game in Redis: chunk results / partials | {per_game[0]:.1f} bytes / {per_game[1]:.1f} bytes |",
        f"| per-game records: Parquet / CSV | {parquet['parquet_bytes_per_game']:.1f} bytes / "
        f"{parquet['csv_bytes_per_game']:.1f} bytes a game; a lookup by seed in {parquet['games']:,} games "
        f"{parquet['lookup_by_seed_seconds']:.2f} s |",
    ]
    night = 10_000_000
    cpu = night / sim["heuristic_games_per_cpu_second"]
    walls = ", ".join(f"{n} processes {_duration(cpu / n)}" for n in (8, 16, 32, 64))
    cost = (
        f"**What a 10M-game night costs**, by these figures, with heuristic bots in every seat: simulation "
        f"{cpu:,.0f} CPU seconds ({cpu / 3600:.0f} CPU hours), folding "
        f"{big['fold_cpu_seconds_per_million_games'] * night / 1e6:,.0f} CPU seconds; on N worker processes "
        f"about {cpu:,.0f} / N seconds of wall time: {walls}. The finish's paired comparisons are linear in "
        f"games: about {big['paired_cpu_seconds'] * night / big['games']:,.0f} CPU seconds, in the same "
        f"~{big['merge_peak_rss_mb']:.0f} MB of memory. Redis holds about "
        f"{per_game[0] * night / 1e6:,.0f} MB of chunk results and {per_game[1] * night / 1e6:,.0f} MB of "
        f"partials a night; the Parquet records come to about {parquet['parquet_bytes_per_game'] * night / 1e6:,.0f} MB."
    )
    return "\n".join([*rows, "", cost, "", _when(section), "", *_targets(section)]) + "\n"


# A busy live table (one human and three heuristic bots, as issue 28 measured it: 4,500
# moves/s from ~6,000 busy tables) makes about this many moves a second.
BUSY_TABLE_MOVES_PER_SECOND = 0.75
CAPACITY_TABLES = 100_000


def _cost_detail(cost: dict[str, Any]) -> list[str]:
    """The Redis CPU figure's spread and its checks (bench/redis_cost.py's docstring): each
    round's mean, the median move, the servers' own CPU, and how fast Redis ran then."""
    single, cluster = cost["single"], cost["cluster"]
    if "redis_cpu_ms_per_move_rounds" not in single:
        return []

    def rounds(row: dict[str, Any]) -> str:
        return ", ".join(f"{x:.3f}" for x in row["redis_cpu_ms_per_move_rounds"])

    def load(row: dict[str, Any]) -> str:
        start = ", ".join(f"{x:.1f}" for x in row["load_average_at_start"])
        return f"{start}; {row['load_average_after_moves'][0]:.1f}"

    return [
        f"| ... each round's mean (ms) | {rounds(single)} | {rounds(cluster)} |",
        f"| ... mean over all moves / median move (ms) | {single['redis_cpu_ms_per_move_mean']} / "
        f"{single['redis_cpu_ms_median_move']} | {cluster['redis_cpu_ms_per_move_mean']} / {cluster['redis_cpu_ms_median_move']} |",
        f"| Redis servers' own CPU per move, lookups between moves too (ms, /proc) | "
        f"{single['process_cpu_ms_per_move']} | {cluster['process_cpu_ms_per_move']} |",
        f"| a PING / an HGETALL of 40 fields then, tight loop (usec) | {single['reference_usec_per_call']['ping']} / "
        f"{single['reference_usec_per_call']['hgetall']} | {cluster['reference_usec_per_call']['ping']} / "
        f"{cluster['reference_usec_per_call']['hgetall']} |",
        f"| load average as the moves began (1, 5, 15 min); after them (1 min) | {load(single)} | {load(cluster)} |",
    ]


def scale_table(results: dict[str, Any]) -> str:
    """What one Redis shard, one gateway core and one engine core carry, from the measured
    costs per move, and what 100,000 concurrent busy tables need."""
    cost = _section(results, "redis_cost")
    gateway = _section(results, "gateway")["http"]["paced_half"]["cpu_ms_per_move"]
    engine_ms = max(v for k, v in gateway.items() if k.startswith("engine "))
    rows = [
        "| figure | one Redis | one cluster shard (3-master cluster) |",
        "|---|---|---|",
        f"| Redis commands per human move | {cost['single']['commands_per_move']} | {cost['cluster']['commands_per_move']} |",
        f"| Redis CPU per move (ms; median of the rounds' means) | {cost['single']['redis_cpu_ms_per_move']} | {cost['cluster']['redis_cpu_ms_per_move']} |",
        *_cost_detail(cost),
        f"| Redis memory per live table, mean (KB) | {cost['single']['live_table_bytes_mean'] / 1024:.1f} | {cost['cluster']['live_table_bytes_mean'] / 1024:.1f} |",
        f"| Redis memory of the largest live table, any version, any game (KB) | {cost['single']['live_table_bytes_max'] / 1024:.1f} | {cost['cluster']['live_table_bytes_max'] / 1024:.1f} |",
        *(
            f"| ... of {game} (KB) | {cost['single']['live_table_bytes_max_by_game'][game] / 1024:.1f} | "
            f"{cost['cluster']['live_table_bytes_max_by_game'][game] / 1024:.1f} |"
            for game in sorted(cost["single"].get("live_table_bytes_max_by_game", {}))
            if game in cost["cluster"].get("live_table_bytes_max_by_game", {})
        ),
    ]
    shard_ms = max(cost["single"]["redis_cpu_ms_per_move"], cost["cluster"]["redis_cpu_ms_per_move"])
    per_shard = 1000 / shard_ms
    per_gateway_core = 1000 / gateway["gateway"]
    per_engine_core = 1000 / engine_ms
    moves = CAPACITY_TABLES * BUSY_TABLE_MOVES_PER_SECOND
    # Sized at the largest a table gets (near its end), not the mean: every table gets there.
    table_kb = max(cost["single"]["live_table_bytes_max"], cost["cluster"]["live_table_bytes_max"]) / 1024
    capacity = [
        "| capacity, from the costs above | per unit | for 100,000 busy tables |",
        "|---|---|---|",
        f"| moves/s one Redis shard's core carries | {per_shard:,.0f} | {moves / per_shard:.1f} shards |",
        f"| busy tables per Redis shard (at {BUSY_TABLE_MOVES_PER_SECOND} moves/s each) | "
        f"{per_shard / BUSY_TABLE_MOVES_PER_SECOND:,.0f} | |",
        f"| Redis memory of live tables | {table_kb:.1f} KB a table | {CAPACITY_TABLES * table_kb / 1024 / 1024:.2f} GB |",
        f"| moves/s per gateway core ({gateway['gateway']} ms CPU a move) | {per_gateway_core:,.0f} | "
        f"{moves / per_gateway_core:.0f} cores |",
        f"| moves/s per engine core ({engine_ms} ms CPU an Apply) | {per_engine_core:,.0f} | "
        f"{moves / per_engine_core:.0f} cores |",
    ]
    return (
        "\n".join(
            [
                *rows,
                "",
                *capacity,
                "",
                f"Redis: {_when(cost)} Gateway and engines: {_when(_section(results, 'gateway'))}",
                "",
                *_targets(cost),
            ]
        )
        + "\n"
    )


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def fairness_table(results: dict[str, Any]) -> str:
    section = _section(results, "fairness")
    rows = [
        "| run | human's bot reply p50 (ms) | p90 (ms) | max (ms) | replies |",
        "|---|---|---|---|---|",
    ]
    for key, name in (
        ("alone", "alone"),
        (
            "loaded",
            f"{section['bot_only_tables']} bot-only tables, `{section['bot_only_bot']}` in both seats",
        ),
    ):
        run = section[key]
        rows.append(
            f"| {name} | {run['reply_p50_ms']:.0f} | {run['reply_p90_ms']:.0f} | {run['reply_max_ms']:.0f} "
            f"| {run['replies']} |"
        )
    return "\n".join(
        [
            *rows,
            "",
            f"A tables and a bots worker, {section['worker_processes']} processes each. {_when(section)}",
            *_targets(section),
            "",
        ]
    )


def power_table(results: dict[str, Any]) -> str:
    """Coupled deals: discordance under donuts=9, the paired test's power, engine speed."""
    section = _section(results, "power")
    c = section["coupled"]
    rows = [
        f"Trash Cult, {c['players']} players, heuristic bots, base against `{c['variant']}` on the same seeds "
        "(games per cell in the table); the games where the Rat cult sat, and the share's 95 % bootstrap "
        "interval over those paired games:",
        "",
        "| shuffle | games per cell | Rat sat | Rat wins, base -> variant | discordant games | if independent "
        "| share | 95 % interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for shuffle in ("fisher-yates", "keyed"):
        r = c[shuffle]
        low, high = r.get("share_interval_95", ("-", "-"))
        rows.append(
            f"| {shuffle} | {r.get('games', c['games']):,} | {r['games_rat_sat']:,} "
            f"| {100 * r['rat_base']:.1f}% -> {100 * r['rat_variant']:.1f}% "
            f"| {r['discordant']:,} | {r['independent_expectation']:,.1f} | {r['discordant_share_of_independent']:.3f} "
            f"| {low} - {high} |"
        )
    sizes = sorted(c["keyed"]["power_at_5pct"], key=int)
    rows += [
        "",
        f"Power of the test of that change ({100 * c['change']['difference']:+.1f} points from "
        f"{100 * c['change']['rat_base']:.1f}%, both samples together; the Rat cult sits in "
        f"{100 * c['change']['rat_sat_share']:.0f}% of games), normal approximation, by games per cell; "
        "a night's BH level is 0.05 / 1,300:",
        "",
        "| test | " + " | ".join(sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for key, level in (
        ("independent_power_at_5pct", "5 %"),
        ("independent_power_at_night_bh_level", "a night's BH level"),
    ):
        rows.append(
            f"| two independent samples, {level} | " + " | ".join(f"{c[key][n]:.2f}" for n in sizes) + " |"
        )
    for shuffle in ("fisher-yates", "keyed"):
        for key, level in (("power_at_5pct", "5 %"), ("power_at_night_bh_level", "a night's BH level")):
            rows.append(
                f"| paired, {shuffle}, {level} | "
                + " | ".join(f"{c[shuffle][key][n]:.2f}" for n in sizes)
                + " |"
            )
    rows += [
        "",
        "| game | Fisher-Yates random decisions/s | keyed | keyed / Fisher-Yates |",
        "|---|---|---|---|",
    ]
    for game, r in section["speed"].items():
        rows.append(
            f"| {TITLES.get(game, game)} | {r['fisher_yates_decisions_per_second']:,} | "
            f"{r['keyed_decisions_per_second']:,} | {r['keyed_over_fisher_yates']:.3f} |"
        )
    rows += _sources_rows(section.get("coupling_sources"))
    rows += _parts_measured(section, ("coupled", "speed", "coupling_sources"))
    return "\n".join([*rows, "", _when(section), *_targets(section), ""])


# What each mode of bench/coupling_sources.py re-couples, in a reader's words.
_SOURCE_MODES = {
    ("stream", "stream"): "none: the code as it is",
    ("turn", "stream"): "the game's draws keyed by (seed, what, turn, count in the turn)",
    ("count", "stream"): "the game's draws keyed by (seed, what, count in the game)",
    ("stream", "const"): "each bot's tie-break salt fixed for the whole game",
    ("stream", "turn"): "each bot's tie-break salt keyed by (seed, turn)",
    ("turn", "const"): "both: game draws by turn, bots' salts fixed",
}


def _sources_rows(sources: dict[str, Any] | None) -> list[str]:
    """The sources table (bench/coupling_sources.py): the discordant share with each
    randomness re-coupled, on the same pairs."""
    if not sources:
        return []
    rows = [
        "",
        f"Which randomness keeps the pairs apart: the same pairs ({sources['games']:,} games per cell, "
        "keyed deals) with the game's generator or the bots' tie-break streams re-coupled "
        "(bench/coupling_sources.py); a pair plays the same game when every move is the same:",
        "",
        "| re-coupled | Rat sat | discordant | if independent | share | +- 1 s.e. | same game |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sources["modes"]:
        what = _SOURCE_MODES.get((r["game"], r["bot"]), f"game {r['game']}, bot {r['bot']}")
        rows.append(
            f"| {what} | {r['pairs']:,} | {r['discordant']:,} | {r['independent_expectation']:,.1f} "
            f"| {r['share']:.3f} | {r['share_se']:.3f} | {100 * r['same_game']:.0f}% |"
        )
        parted = r.get("parted_only")
        if parted:
            rows.append(
                f"| the same, pairs that parted only | {parted['pairs']:,} | {parted['discordant']:,} "
                f"| {parted['independent_expectation']:,.1f} | {parted['share']:.3f} | {parted['share_se']:.3f} | 0% |"
            )
    return rows


def power_nightly_table(results: dict[str, Any]) -> str:
    """The nightly's false alarms over real A/A pairs and its power against one-card changes."""
    section = _section(results, "power")
    aa = section["nightly_aa"]
    if "game" in aa:  # an older run's one-game layout
        aa = {aa["game"]: aa}
    rows = [
        "| nights | games per cell | pairs or nights | flagged | rate | one night's wall time |",
        "|---|---|---|---|---|---|",
    ]
    for game, r in aa.items():
        rows.append(
            f"| A/A: {TITLES.get(game, game)}, master seeds s and s+1 | {r['games_per_cell']} | {r['pairs']} pairs "
            f"| {r['pairs_with_a_drift']} | {100 * r['false_alarm_rate']:.0f} % | {r['night_wall_seconds']:.0f} s |"
        )
    for game, r in section["nightly_planted"].items():
        change = ", ".join(f"{k}={v}" for k, v in r["change"].items())
        if "error" in r:
            rows.append(
                f"| planted `{change}`: {TITLES.get(game, game)} | - | - | - | not run: {r['error']} | - |"
            )
            continue
        rows.append(
            f"| planted `{change}` against the same seed: {TITLES.get(game, game)} | {r['games_per_cell']} "
            f"| {r['nights']} nights | {r['nights_flagged']} | {100 * r['power']:.0f} % | {r['night_wall_seconds']:.0f} s |"
        )
    rows += _parts_measured(section, ("nightly_aa", "nightly_planted"))
    return "\n".join([*rows, "", _when(section), *_targets(section), ""])


def _parts_measured(section: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    """When and at what load each part of a section that runs its parts separately was
    measured (bench/power.py `parts_measured`): the run's own line is only the last run's."""
    measured = {
        part: m for part, m in section.get("parts_measured", {}).items() if part.split(".")[0] in keys
    }
    if not measured:
        return []
    return [""] + [
        f"- {part}: measured {m.get('at')}, load average (1, 5, 15 min) at its end "
        f"{', '.join(f'{x:.2f}' for x in m.get('load_average_at_end') or []) or 'not recorded'}"
        for part, m in measured.items()
    ]


def _share(count: int | None, of: int, share: float | None) -> str:
    return "-" if share is None or count is None else f"{count}/{of} ({share:.0%})"


def web_play_table(results: dict[str, Any]) -> str:
    """Issue 31's browser bench: one whole game per title from the lobby's Play button
    against Steady bots, desktop and phone."""
    section = _section(results, "web_play")
    pace = section["pace_ms"]
    least = section.get("min_visible_ms", pace)
    rows = [
        f"| game | size | clicks | Play to first playable panel (s) | bot moves on screen >= {pace} ms "
        f"| >= {least} ms | shortest (ms) | before your own move | game (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for game, title in TITLES.items():
        for size, f in section["games"].get(game, {}).items():
            paced = f["bot_moves_page_paced"]
            shown = _share(f["bot_moves_visible_for_pace"], paced, f["visible_share"])
            seen = _share(f.get("bot_moves_visible_400ms"), paced, f.get("visible_400ms_share"))
            rows.append(
                f"| {title} | {size} | {f['clicks']} | {f['first_playable_seconds']:.2f} | {shown} | {seen} "
                f"| {f['shortest_bot_move_ms']} | {f['bot_moves_before_own_move']} | {f['game_seconds']:.0f} |"
            )
    sizes = ", ".join(f"{name} {v['width']}x{v['height']}" for name, v in section["sizes"].items())
    at_once = section.get("concurrent_games")
    note = (
        f"Pace {pace} ms ({section.get('pace', 'BENCH_WEB_PACE')}), {section['tolerance_ms']} ms timer tolerance; "
        f"{sizes}; {section['cpus']} CPUs"
        + (f"; {at_once} games played at once" if at_once else "")
        + ". "
        + _when(section)
    )
    return "\n".join([*rows, "", note, "", *_targets(section)]) + "\n"


def streams_table(results: dict[str, Any]) -> str:
    """5,000 streams on one gateway process, on one Redis and on a cluster (bench/streams.py)."""
    section = _section(results, "streams")
    rows = [
        "| Redis | streams open | Redis connections for streams | KB per stream | move p50 (ms) none / with "
        "| move p99 (ms) none / with | p99 ratio pooled | p99 ratio per round (min, median, max) "
        "| load average per phase | streams missing a move | engine calls split |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in ("single", "cluster"):
        if kind not in section:
            raise MissingFigures(
                f"bench/results.json's 'streams' has no '{kind}': run `python -m bench.run streams`"
            )
        run = section[kind]
        spread = run["p99_ratio_per_round"]
        loads = [
            f"{r['load_no_streams']['load_average_1min']:.1f}/{r['load_with_streams']['load_average_1min']:.1f}"
            for r in run["per_round"]
        ]
        split = "/".join(f"{c * 100:.0f}" for c in run["engine_split"])
        rows.append(
            f"| {kind} | {run['streams_open']:,} | {run['redis_connections_for_streams']} | {run['kb_per_stream']:.1f} "
            f"| {run['move_p50_ms_no_streams']:.1f} / {run['move_p50_ms_with_streams']:.1f} "
            f"| {run['move_p99_ms_no_streams']:.1f} / {run['move_p99_ms_with_streams']:.1f} "
            f"| {run['p99_ratio']:.2f}x | {spread['min']:.2f}x, {spread['median']:.2f}x, {spread['max']:.2f}x "
            f"| {', '.join(loads)} | {run['streams_missing_a_move']} | {split} |"
        )
    first = section["single"]
    note = (
        f"{first['rounds']} rounds a store, each {first['moves_per_phase']} timed moves with no stream open, then "
        f"{first['streams']:,} streams over the tables and {first['moves_per_phase']} moves with them; load "
        "average (1 min) per round as no streams / with streams. " + _when(section)
    )
    return "\n".join([*rows, "", note, "", *_targets(section)]) + "\n"


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "streams": streams_table,
    "power": power_table,
    "power_nightly": power_nightly_table,
    "gateway": gateway_table,
    "fairness": fairness_table,
    "grpc": grpc_table,
    "engines": engines_table,
    "gateway_profile": profile_table,
    "drift": drift_table,
    "bots": bots_table,
    "sweep_aggregation": aggregation_table,
    "scale": scale_table,
    "web_play": web_play_table,
}


def rewrite(text: str, results: dict[str, Any]) -> str:
    """`text` with every marked region made again from `results`."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise MissingFigures(f"no generator for the docs region 'bench:{name}'; known: {sorted(TABLES)}")
        return match.group(1) + TABLES[name](results) + match.group(4)

    return REGION.sub(fill, text)


def pages(docs: Path = DOCS) -> list[Path]:
    """The docs pages that hold at least one generated region."""
    return sorted(p for p in docs.rglob("*.md") if REGION.search(p.read_text()))


def write(results: dict[str, Any], docs: Path = DOCS) -> list[Path]:
    """Rewrite every page's regions; the pages that changed. A page whose regions need
    figures the results lack is left as it is (and named), the others are still written."""
    changed = []
    for page in pages(docs):
        text = page.read_text()
        try:
            made = rewrite(text, results)
        except MissingFigures as exc:
            print(f"  {page.name}: not rewritten: {exc}")
            continue
        if made != text:
            page.write_text(made)
            changed.append(page)
    return changed
