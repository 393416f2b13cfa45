"""Output for people and for programs: tables fit the terminal (columns left out in the
documented order, `--wide` for all, a legend under coded columns), `--json` where results
are printed, help with defaults and environment variables, `--version`, completion."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from services.cli import ladder_cmd, nightly_cmd, sweep_cmd
from services.cli.main import build_parser
from services.cli.main import main as cli
from services.cli.tables import Group, fit, print_table
from services.runtime.ports import free_port

SWEEP_ROW = ["5p | heuristic, random, random, random, random", "400", "0.175 0.170 0.193 0.247 0.215",
             "0.200", "0.000", "137.2", "seat"]  # fmt: skip


def _shown(columns, rows, width) -> list[str]:
    return [columns[i].header for i in fit(columns, rows, width)]


def test_columns_are_left_out_in_their_documented_order():
    cols = sweep_cmd.COLUMNS
    assert _shown(cols, [SWEEP_ROW], 200) == [c.header for c in cols]
    assert _shown(cols, [SWEEP_ROW], 100) == ["cell", "games", "seat win rates", "fair", "draws", "flags"]
    assert _shown(cols, [SWEEP_ROW], 80) == ["cell", "seat win rates", "flags"]
    assert _shown(cols, [SWEEP_ROW], 20) == ["cell", "seat win rates", "flags"]  # rank 0 always stays
    ladder = ladder_cmd.STANDINGS
    row = ["ismcts:iterations=100", "300", "120", "40.0%", "34.6%-45.6%", "33.3%", "27.10", "1.20", "23.50"]
    assert _shown(ladder, [row], 120) == [c.header for c in ladder]
    assert _shown(ladder, [row], 80) == ["bot", "win rate", "95% Wilson", "fair share", "ordinal"]
    assert _shown(ladder, [row], 60) == ["bot", "win rate", "95% Wilson"]


def test_a_printed_table_fits_the_width_and_says_what_it_left_out():
    out = io.StringIO()
    rows = [Group("variant=base dark_powers=false"), SWEEP_ROW, SWEEP_ROW]
    left = print_table(Console(file=out, width=80), "t", sweep_cmd.COLUMNS, rows, legend=["flags: legend"])
    text = out.getvalue()
    assert left == ["games", "fair", "draws", "mean turns"]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "left out to fit 80 columns: games, fair, draws, mean turns (--wide shows all)" in text
    assert "flags: legend" in text and "variant=base dark_powers=false" in text
    assert "…" not in text  # wrapped, never cut


def test_wide_prints_every_column_on_one_line_each():
    out = io.StringIO()
    assert print_table(Console(file=out, width=80), "t", sweep_cmd.COLUMNS, [SWEEP_ROW], wide=True) == []
    header = next(line for line in out.getvalue().splitlines() if "cell" in line)
    assert all(c.header in header for c in sweep_cmd.COLUMNS)
    assert any(SWEEP_ROW[0] in line for line in out.getvalue().splitlines())  # the label unwrapped


def test_a_p_value_below_what_is_shown_is_never_zero():
    assert nightly_cmd._p(0.0) == "<0.001" and nightly_cmd._p(0.0123) == "0.012"


def test_simulate_json_is_json_lines_and_jsonl_its_alias(capsys):
    assert cli(["simulate", "trash_cult", "--games", "3", "--seed", "5", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["seed"] for x in lines] == [5, 6, 7]
    assert cli(["simulate", "trash_cult", "--games", "3", "--seed", "5", "--jsonl"]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_status_json_says_each_part_and_exits_1_when_one_is_down(capsys):
    nowhere = f"127.0.0.1:{free_port()}"
    assert cli(["status", "--engine", f"trash_cult={nowhere}", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["all_up"] is False
    assert doc["parts"] == [
        {"part": "engine trash_cult", "state": "down", "detail": f"{nowhere}: UNAVAILABLE"}
    ]


def test_version(capsys):
    assert cli(["--version"]) == 0
    assert capsys.readouterr().out.startswith("cultists ")


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_names_every_command_and_flag(shell, capsys):
    assert cli(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in (
        "simulate",
        "replay",
        "ladder",
        "sweep",
        "nightly",
        "status",
        "--jobs",
        "--redis-url",
        "--wide",
    ):
        assert word in script, word


def test_every_command_documents_defaults_environment_and_exit_status():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        text = sub.format_help()
        assert "exit status: 0 done" in text, name
    assert "(default: 100)" in commands["simulate"].format_help()
    assert "environment:" in commands["run"].format_help() and "GATEWAY_PORT" in commands["run"].format_help()
    assert "CULTISTS_DATA" in commands["sweep"].format_help()
    for name in ("sweep", "tune", "nightly", "ladder"):
        assert "-j N, --jobs N" in commands[name].format_help(), name
        assert "--processes" not in commands[name].format_help(), name  # the old spelling, hidden
