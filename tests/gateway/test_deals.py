"""A live table's deal is keyed from the server's deal secret (docs/fairness.md): nobody
can rebuild it from the public seed and config while it lives, and its replay record,
once it is over, rebuilds it exactly. Real engines, Redis and Celery worker."""

from __future__ import annotations

from services.engines.core.errors import IllegalAction
from services.engines.core.play import replay
from services.engines.core.serial import state_from_bytes
from services.engines.registry import load_game
from services.platform.deal import deal_key
from services.platform.keys import table_key

from .support import stored, two_player_config, wait_for

GAME = "trash_cult"


def _open(client, seats: list[dict], seed: int | None = None) -> dict:
    body = {"game": GAME, "config": two_player_config(GAME), "seats": seats}
    if seed is not None:
        body["seed"] = seed
    answer = client.post("/api/tables", json=body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def _record(gw, tid: str) -> tuple[int, bytes | None]:
    seed, key = gw.redis.hmget(table_key(tid), "seed", "deal_key")
    return int(seed), bytes.fromhex(key.decode()) if key else None


def _cards(doc: dict) -> dict:
    """A state document without its generator's fields: the cards and where they lie."""
    return {k: v for k, v in doc.items() if k not in ("rng", "generator", "deal_key")}


def test_a_live_deal_cannot_be_rebuilt_from_its_public_seed_and_config(client, app) -> None:
    gw = app.extensions["cultists"]
    table = _open(client, [{"kind": "human"}, {"kind": "human"}])
    tid = table["table"]
    assert table["status"] == "waiting" and table["seed_source"] == "server"
    seed, key = _record(gw, tid)
    assert key == deal_key(gw.settings.deal_secret, tid, seed)
    live = state_from_bytes(stored(gw.redis, tid)[1]).to_json()
    assert live["generator"] == "chacha20" and live["deal_key"] == key.hex()
    shown = client.get(f"/api/tables/{tid}").get_data(as_text=True) + client.get(
        f"/api/tables/{tid}/view"
    ).get_data(as_text=True)
    assert key.hex() not in shown, "the key is never shown while the table lives"
    refused = client.get(f"/api/tables/{tid}/replay")
    assert refused.status_code == 409 and key.hex() not in refused.get_data(as_text=True)

    # All that anyone but the server knows, the seed and the config, deals other cards; so
    # does a key from any other secret. Only the table's own key deals its cards.
    spec = load_game(GAME)
    config = spec.make_config(table["config"])
    from_seed = spec.new_state(config, 2, seed).to_json()
    guessed = spec.new_state(config, 2, seed, deal_key(b"a guessed secret", tid, seed)).to_json()
    assert "generator" not in from_seed
    assert _cards(from_seed) != _cards(live) and _cards(guessed) != _cards(live)
    assert spec.new_state(config, 2, seed, key).to_json() == live


def test_a_finished_tables_record_rebuilds_its_deal_exactly(client, app, table_worker) -> None:
    gw = app.extensions["cultists"]
    table = _open(client, [{"kind": "bot", "bot": "random"}] * 2)
    tid = table["table"]
    seed, key = _record(gw, tid)
    assert key is not None
    wait_for(
        lambda: client.get(f"/api/tables/{tid}").get_json()["status"] == "finished",
        timeout=120,
        what="the bots",
    )
    record = client.get(f"/api/tables/{tid}/replay").get_json()
    assert record["deal_key"] == key.hex() and record["seed"] == seed
    spec = load_game(GAME)
    final = state_from_bytes(stored(gw.redis, tid)[1])
    rebuilt = replay(spec, spec.make_config(record["config"]), 2, seed, record["actions"], key)
    assert rebuilt == final, "the finished table's record rebuilds its game exactly"
    try:
        unkeyed = replay(spec, spec.make_config(record["config"]), 2, seed, record["actions"])
    except IllegalAction:  # the seed's own deal: the recorded moves stop being legal
        unkeyed = None
    assert unkeyed != final, "without the key the record does not rebuild the game"
    page = client.get(f"/replay?table={tid}&step=3")
    assert page.status_code == 200, "the replay page rebuilds a keyed deal from the record too"


def test_a_chosen_practice_seed_stays_the_seeded_deal(client, app) -> None:
    """A seed the opener chose (one human at most, table_seed) is a deal anyone may
    rebuild from it: no key, and the seed's own deal."""
    gw = app.extensions["cultists"]
    table = _open(client, [{"kind": "human"}, {"kind": "bot", "bot": "random"}], seed=11)
    seed, key = _record(gw, table["table"])
    assert table["seed_source"] == "chosen" and seed == 11 and key is None
    spec = load_game(GAME)
    live = state_from_bytes(stored(gw.redis, table["table"])[1])
    assert live == spec.new_state(spec.make_config(table["config"]), 2, 11)
