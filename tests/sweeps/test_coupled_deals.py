"""Sweeps deal keyed (docs/fairness.md, "Coupled deals"): pairing works for deck counts, and
a sweep stored before keyed deals still replays as it was played."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from services.balance.sweeps.aggregate import replay_url
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.simulate import replay_record, simulate_chunk
from services.balance.sweeps.spec import parse_spec, parse_stored_spec
from services.engines.core.play import replay
from services.engines.trash_cult import GAME as TRASH

# Made with the code before keyed deals (main at 5771c9a): a sweep's stored spec, the
# replay records of some of its games (actions as a digest) and every game's outcome.
STORED = Path(__file__).with_name("data") / "fisher_yates_sweep.json"


def test_a_sweep_stored_before_keyed_deals_replays_as_it_was_played() -> None:
    stored = json.loads(STORED.read_text())
    assert "shuffle" not in stored["spec"]
    spec = parse_stored_spec(stored["spec"])
    assert spec.shuffle == "fisher-yates" and all(c.skipped is None for c in spec.cells())
    for old in stored["replays"]:
        record = replay_record(spec, old["cell"], old["game_index"])
        digest = hashlib.sha256(json.dumps(record["actions"]).encode()).hexdigest()
        assert digest == old["actions_sha256"] and record["winners"] == old["winners"]
        assert record["turns"] == old["turns"] and record["shuffle"] == "fisher-yates"
        # ... and `cultists replay` reads the record as Fisher-Yates (it names none or that)
        state = replay(TRASH, record["config"], record["players"], record["seed"], record["actions"])
        assert state.winners() == old["winners"]
    results = sorted((simulate_chunk(spec, c) for c in chunks(spec)), key=lambda r: r["cell"])
    assert [r["winners"] for r in results] == stored["winners"]
    assert [r["turns"] for r in results] == stored["turns"]
    url = urlparse(replay_url(spec, spec.cells()[0], 0))
    assert "shuffle" not in parse_qs(url.query)


def test_a_new_sweep_deals_keyed_and_its_records_say_so() -> None:
    spec = parse_spec({"game": "trash_cult", "seed": 4, "games": 2, "players": [2], "chunk": 2})
    assert spec.shuffle == "keyed" and spec.to_dict()["shuffle"] == "keyed"
    record = replay_record(spec, 0, 1)
    assert record["shuffle"] == "keyed"
    state = replay(TRASH, record["config"], 2, record["seed"], record["actions"], shuffle="keyed")
    assert state.is_terminal() and state.winners() == record["winners"]
    assert parse_qs(urlparse(replay_url(spec, spec.cells()[0], 1)).query)["shuffle"] == ["keyed"]
    assert parse_stored_spec(spec.to_dict()).shuffle == "keyed"


def _rat_pairs(shuffle: str, games: int) -> tuple[int, float]:
    """Base against donuts=9 on the same seeds: (discordant "Rat won" games, expected
    discordant games if the two were independent), over the games where Rat sat."""
    spec = parse_spec(
        {"game": "trash_cult", "seed": 77, "games": games, "players": [2], "chunk": games,
         "grid": [{}, {"donuts": 9}], "lineups": ["heuristic"], "shuffle": shuffle}
    )  # fmt: skip
    res = {r["cell"]: r for r in (simulate_chunk(spec, c) for c in chunks(spec))}

    def rat(r: dict) -> list[tuple[bool, bool]]:
        cults = [f["groups"]["cult"] for f in r["facts"]]
        return [("Rat" in c, any(c[s] == "Rat" for s in w)) for c, w in zip(cults, r["winners"], strict=True)]

    pairs = [(a[1], b[1]) for a, b in zip(rat(res[0]), rat(res[1]), strict=True) if a[0] and b[0]]
    n = len(pairs)
    p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    return sum(a != b for a, b in pairs), n * (p_a * (1 - p_b) + p_b * (1 - p_a))


def test_coupled_deals_make_fewer_games_discordant_under_a_deck_change() -> None:
    """One Donut fewer: with Fisher-Yates the paired games disagree about as often as two
    independent samples would; keyed, far less often."""
    fy, fy_expected = _rat_pairs("fisher-yates", 300)
    keyed, keyed_expected = _rat_pairs("keyed", 300)
    assert fy / fy_expected > 0.75
    assert keyed / keyed_expected < 0.75 * (fy / fy_expected)
