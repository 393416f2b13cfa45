"""A fourth game, from outside the tree, through the documented extension points only.

Take Away (tests/games/take_away) is named nowhere under services/, deploy/ or the
project files: it is registered here (`register_game`) and, for the processes these tests
start, by CULTISTS_EXTRA_GAMES. Then it plays through the engine's real gRPC server, the
gateway's table API (two human seats, real Redis) and a local sweep (`cultists sweep
--local` in a process of its own), as the three games of the tree do. docs/engine-guide.md
is the guide these steps follow.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.registry import EXTRA_GAMES_ENV, GAME_MODULES, GAMES, load_game, register_game

ROOT = Path(__file__).resolve().parents[2]
NAME = "take_away"
MODULE = "tests.games.take_away"


@pytest.fixture(scope="module")
def registered() -> Iterator[str]:
    register_game(NAME, MODULE)
    try:
        yield NAME
    finally:  # the other test files of this process see the tree's games only
        GAMES.pop(NAME, None)
        GAME_MODULES.pop(NAME, None)


@pytest.fixture(scope="module")
def engine(registered: str) -> Iterator[object]:
    from services.engines.core.server import start_engine

    running = start_engine(NAME, port=0, metrics_port=0)
    try:
        yield running
    finally:
        running.stop(grace=1)


def test_it_plays_by_the_game_protocol_with_every_generic_bot(registered: str) -> None:
    from services.engines.core.bots import make_bot

    spec = load_game(NAME)
    assert spec.presentation is not None and spec.presentation.text("skip")
    for bot in ("random", "ismcts:iterations=20"):
        for seed in range(5):
            state = spec.new_state(None, 2, seed)
            bots = [make_bot(spec, bot, seed * 2 + s) for s in range(2)]
            while not state.is_terminal():
                (seat,) = state.to_act()
                legal = state.legal_actions(seat)
                state.apply(seat, bots[seat].choose(state, seat, legal))
                again = type(state).from_json(state.to_json())  # serialises and checks itself
                assert again.to_json() == state.to_json()
            assert len(state.winners()) == 1 and sorted(state.returns()) == [0.0, 1.0]


def test_it_plays_through_the_engine_grpc_server(engine) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        stub = engine_pb2_grpc.GameEngineStub(channel)
        described = stub.Describe(engine_pb2.DescribeRequest(), timeout=10)
        assert described.game == NAME and described.max_players == 2
        step = stub.NewGame(engine_pb2.NewGameRequest(players=2, seed=3), timeout=10)
        pick = random.Random(1)
        moves = 0
        while not step.terminal:
            seat = step.to_act[0]
            view = stub.View(engine_pb2.ViewRequest(state=step.state, seat=seat), timeout=10)
            assert view.legal_actions, "the seat asked has legal actions"
            action = pick.choice(view.legal_actions).id
            step = stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action), timeout=10)
            moves += 1
        assert moves > 0 and sorted(step.returns) == [0.0, 1.0]
        with pytest.raises(grpc.RpcError) as refused:
            stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=0, action=1), timeout=10)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_it_plays_through_the_gateway_table_api(engine, redis_url: str, tmp_path: Path) -> None:
    from services.gateway import create_app
    from services.platform.settings import Settings

    settings = Settings(
        redis_url=redis_url,
        archive_dir=str(tmp_path / "archive"),
        engine_addresses={NAME: f"127.0.0.1:{engine.port}"},
        games=[NAME],
        rate_limit_address="",
        rate_limit_player="",
        rate_limit_guest="",
        max_waiting_tables=0,
    )
    app = create_app(settings)
    client = app.test_client()
    try:
        games = client.get("/api/games").get_json()
        assert NAME in json.dumps(games)
        table = client.post("/api/tables", json={"game": NAME, "seats": [{"kind": "human"}] * 2, "seed": 7})
        assert table.status_code == 201, table.get_json()
        tid = table.get_json()["table"]
        tokens = {}
        for seat in range(2):
            claim = client.post(f"/api/tables/{tid}/seats/{seat}", json={"player": f"p{seat}"})
            assert claim.status_code == 201, claim.get_json()
            tokens[seat] = claim.get_json()["token"]
        pick = random.Random(2)
        while True:
            public = client.get(f"/api/tables/{tid}/view").get_json()
            if public["terminal"]:
                break
            seat = public["to_act"][0]
            mine = client.get(f"/api/tables/{tid}/view", headers={"Authorization": f"Bearer {tokens[seat]}"})
            body = mine.get_json()
            assert body["view"]["hand_sizes"] == public["view"]["hand_sizes"]
            assert public["view"]["hand"] == [], "a spectator sees no hand"
            move = client.post(
                f"/api/tables/{tid}/actions",
                json={"action": pick.choice(body["legal_actions"])["id"], "version": body["version"]},
                headers={"Authorization": f"Bearer {tokens[seat]}"},
            )
            assert move.status_code == 200, move.get_json()
        final = client.get(f"/api/tables/{tid}").get_json()
        assert final["status"] == "finished" and len(final["winners"]) == 1
        page = client.get(f"/tables/{tid}")
        assert page.status_code == 200  # the table page, with no template of the game's own
    finally:
        app.extensions["cultists"].close()


def test_it_runs_in_a_local_sweep(tmp_path: Path) -> None:
    spec = tmp_path / "take_away.yaml"
    spec.write_text(f"game: {NAME}\nseed: 1\ngames: 40\nplayers: [2]\nlineups: [random]\n")
    env = {**os.environ, EXTRA_GAMES_ENV: f"{NAME}={MODULE}", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "sweep", str(spec), "--local", "-j", "2", "--json",
         "--out", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["game"] == NAME and summary["aggregates"]["games_counted"] == 40
    (cell,) = summary["aggregates"]["cells"]
    assert cell["players"] == 2 and sum(seat["wins"] for seat in cell["seats"]) == 40  # no draws
