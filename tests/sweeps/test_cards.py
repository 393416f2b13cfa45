"""Card strength: what each seat drew, held and played; the correlational card report; the ablation.

The ablation's planted case is tests/support/planted_cards_game.py: the seat dealt more
Crowns wins 9 games in 10, Stones and Leaves do nothing, so one copy more or less of the
Crown must move its holder's win rate significantly and rank it first, and the two inert
cards must not be significant. Real games check the tracking itself: the same games as
untracked play, and per seat played within held, opening within held.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.balance.sweeps import cards, facts
from services.balance.sweeps.ablation import ablation_report, parse_cards_spec
from services.balance.sweeps.aggregate import game_rows
from services.balance.sweeps.local import run_local, simulate_local
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.report import write_report
from services.balance.sweeps.simulate import simulate_chunk
from services.balance.sweeps.spec import SpecError, parse_spec
from services.engines import registry
from services.engines.core.play import play_to_end
from services.engines.registry import load_game


@pytest.fixture()
def planted_cards(monkeypatch: pytest.MonkeyPatch) -> str:
    """The planted card game with its catalogue and facts hook, in this process only."""
    from tests.support import planted_cards_game as game

    module = "tests.support.planted_cards_game"
    monkeypatch.setitem(registry.GAMES, "planted_cards", registry.Game(module, 0, 0, builtin=False))
    monkeypatch.setitem(registry.GAME_MODULES, "planted_cards", module)
    monkeypatch.setitem(
        cards._CATALOGUES, "planted_cards", cards.CardCatalogue(game.labels_of, game.COUNT_FIELDS)
    )
    monkeypatch.setitem(facts._HOOKS, "planted_cards", game.facts)
    return "planted_cards"


@pytest.mark.parametrize(("game", "config"), [("trash_cult", {}), ("crazy_cultists", {"two_players": True})])
def test_tracked_games_are_the_same_games_and_their_cards_add_up(game, config):
    spec = parse_spec({"game": game, "games": 12, "players": [2], "seed": 4, "config": config})
    result = simulate_chunk(spec, chunks(spec)[0])
    gspec = load_game(game)
    cfg = gspec.make_config(spec.cells()[0].overrides)
    for k in range(result["games"]):
        bots = spec.cells()[0].seat_bots(k)
        _state, rec = play_to_end(gspec, cfg, 2, spec.seed + k, bots, False, None, spec.shuffle)
        assert (rec.winners, rec.turns) == (result["winners"][k], result["turns"][k])  # the same game
        fact = result["facts"][k]
        held, opening, drawn = (fact["cards"][n] for n in ("held", "opening", "drawn"))
        assert opening and held
        for seat in range(2):
            seat_held = {c for c, seats in held.items() if seat in seats}
            assert {c for c, seats in opening.items() if seat in seats} <= seat_held
            assert {c for c, seats in drawn.items() if seat in seats} <= seat_held
            # Every card a seat played from its hand it held (the facts name plays by card).
            played = {c for c, seats in fact["played"].items() if seat in seats and c in gspec_cards(game)}
            assert played <= seat_held, (k, seat, played - seat_held)


def gspec_cards(game: str) -> set[str]:
    cat = cards.catalogue(game)
    assert cat is not None
    return set(cat.count_fields)


def _rows(spec, results) -> tuple[list[dict[str, Any]], list[str]]:
    rows = [dict(r) for r in game_rows(spec, results)]
    for r in rows:  # as the Parquet records hold them (records._parquet_row)
        r["winners"] = [int(s) for s in r["winners"].split(";") if s]
    return rows, list(rows[0])


def test_records_hold_the_cards_and_the_report_reads_them(tmp_path, planted_cards):
    spec = parse_spec({"game": "planted_cards", "games": 600, "seed": 2})
    summary, replays, results = run_local(spec, 1)
    page = write_report(tmp_path, summary, game_rows(spec, results), replays)
    rows, columns = cards.read_records(tmp_path / "games")
    assert {"opening", "drawn", "held", "played"} <= set(columns)
    report = cards.card_report(rows, columns)
    assert summary["cards"] == report  # the report folder's summary carries it
    html = page.read_text()
    assert "Cards: who wins with them" in html and "These are correlations" in html
    assert report["available"] and report["warning"].startswith("These are correlations")
    top = report["ranking"][0]
    assert top["card"] == "Crown" and top["significant"] and top["difference"] > 0.2
    crown = next(
        r
        for r in report["rows"]
        if r["cell"] == "pooled" and r["card"] == "Crown" and r["contrast"] == "opening"
    )
    assert crown["with"]["lo"] <= crown["with"]["rate"] <= crown["with"]["hi"]
    assert crown["p_adj"] >= crown["p"] and crown["significant"]
    assert report["family"]["size"] == len(report["rows"])
    inert = [
        r
        for r in report["rows"]
        if r["card"] != "Crown" and r["contrast"] == "opening" and r["cell"] == "pooled"
    ]
    assert inert and all(r["difference"] < 0 for r in inert)  # a Stone in hand is a Crown not there


def test_records_without_drawn_or_held_data_say_so():
    rows = [{"cell": 0, "players": 2, "winners": [0], "turns": 5, "played": "Hide=0"}]
    report = cards.card_report(rows, list(rows[0]))
    assert report == {"available": False, "reason": cards.MISSING, "rows": []}
    assert "no drawn/held data" in report["reason"]


def test_the_ablation_ranks_the_planted_card_first(planted_cards):
    spec = parse_cards_spec({"game": "planted_cards", "games": 1500, "seed": 7})
    assert [(v.card, v.count) for v in spec.variants] == [
        ("Crown", 1), ("Crown", 3), ("Stone", 5), ("Stone", 7), ("Leaf", 5), ("Leaf", 7),
    ]  # fmt: skip
    assert len(spec.sweep.cells()) == 7  # the base and one cell per change
    results = simulate_local(spec.sweep, 1)
    rows, columns = _rows(spec.sweep, results)
    report = ablation_report(spec, rows, columns)
    first = report["ranking"][0]
    assert first["card"] == "Crown" and first["significant"], report["ranking"]
    assert first["lo"] <= first["difference"] <= first["hi"]
    assert report["headline"].startswith("Crown: ")
    by = {(r["card"], r["count"]): r for r in report["rows"] if r["table"] == "pooled"}
    # One Crown fewer: its single holder wins far more often (no tie with a second Crown).
    assert by[("Crown", 1)]["effect"]["difference"] > 0.05 and by[("Crown", 1)]["significant"]
    assert not any(by[(c, n)]["significant"] for c in ("Stone", "Leaf") for n in (5, 7))


def test_removal_compares_the_base_holders(planted_cards):
    spec = parse_cards_spec(
        {"game": "planted_cards", "games": 400, "seed": 3, "cards": ["Crown"], "changes": ["remove"]}
    )
    (variant,) = spec.variants
    assert (variant.change, variant.count) == ("remove", 0)
    rows, columns = _rows(spec.sweep, simulate_local(spec.sweep, 1))
    (pooled,) = [r for r in ablation_report(spec, rows, columns)["rows"] if r["table"] == "pooled"]
    effect = pooled["effect"]
    # Without Crowns every game is a coin flip: the base's Crown holders lose their edge.
    assert effect["base"] > 0.6 and abs(effect["variant"] - 0.5) < 0.1 and pooled["significant"]
    assert "held it under base" in pooled["text"]


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ({"cards": ["Crown", "Dragon"]}, "cards.1", "unknown card 'Dragon'"),
        (
            {"cards": ["Crown"], "config": {"stones": 0, "leaves": 2}, "changes": [-1]},
            "cards.0",
            "cannot deal",
        ),
        ({"cards": ["Leaf"], "config": {"leaves": 0}}, "cards.0", "also fixed in config"),
        ({"cards": ["Crown"], "changes": [-1, -1]}, "changes", "twice"),
        ({"changes": [2]}, "changes.0", None),
    ],
)
def test_a_bad_card_spec_is_refused_naming_its_field(planted_cards, extra, field, words):
    with pytest.raises(SpecError) as err:
        parse_cards_spec({"game": "planted_cards", "games": 10, **extra})
    assert err.value.field == field
    if words:
        assert words in str(err.value)


def test_a_game_without_a_catalogue_is_refused():
    with pytest.raises(SpecError) as err:
        parse_cards_spec({"game": "tricky_cultists", "games": 10})
    assert err.value.field == "game"


def test_cultists_cards_runs_an_ablation_and_prints_its_report(tmp_path, capsys):
    import orjson

    from services.cli.main import main as cli

    path = tmp_path / "cards.yaml"
    path.write_text(
        "game: trash_cult\nseed: 1\ngames: 24\nplayers: [2]\nchunk: 12\n"
        "cards: [Protection Spell]\nchanges: [1, remove]\n"
    )
    out = tmp_path / "out"
    assert cli(["cards", str(path), "--local", "-j", "1", "--json", "--out", str(out)]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["available"] and report["game"] == "trash_cult"
    assert {(r["change"], r["count"]) for r in report["rows"]} == {(1, 4), ("remove", 0)}
    assert report["ranking"][0]["card"] == "Protection Spell"
    assert (out / "cards.html").read_text().count("Protection Spell") >= 3
    assert (out / "report.html").exists() and (out / "games").is_dir()


def test_cultists_cards_refuses_an_unknown_card_before_any_game(tmp_path, capsys):
    from services.cli.main import main as cli

    path = tmp_path / "cards.yaml"
    path.write_text("game: trash_cult\ngames: 24\ncards: [Hide, Protection Spel]\n")
    out = tmp_path / "out"
    assert cli(["cards", str(path), "--local", "-j", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown card 'Protection Spel'" in err
    assert not out.exists()
