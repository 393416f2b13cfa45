"""Proof by clients nobody hand-wrote (issue 33, item 7).

The gateway is served over real HTTP; its document (`/api/v1/openapi.json`, fetched over
that HTTP) is turned into a Python client by `openapi-python-client` and into TypeScript
types by `openapi-typescript` (npm), which `tsc --strict` checks together with a small
client loop written against them (tests/gateway/ts/). The generated Python client then
plays complete games of all three titles with two human seats, each seat following its
turns through its stream alone (a stream ticket, `state` then `update` events; never a
`GET /legal` or `/view`), moving with an Idempotency-Key; plus matchmaking (two signed-in
players, each following its ticket's stream until matched, then playing its bound seat
with the seat token AND the session), a retried move and a lost join.

Real Redis, real engines, a real table worker for the bot seats Tricky Cultists needs.
"""

from __future__ import annotations

import importlib
import json
import random
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from werkzeug.serving import make_server

from services.gateway import create_app
from services.platform.settings import Settings

from .conftest import forget_gateway_keys

ROOT = Path(__file__).resolve().parents[2]
TS_DIR = Path(__file__).with_name("ts")
NODE_BIN = ROOT / "node_modules" / ".bin"
PACKAGE = "cultists_client"
# A whole game, two seats moving over HTTP against bots on a busy 2-core machine: a few
# seconds; the bound only stops a hung game from hanging the suite.
GAME_SECONDS = 120


@pytest.fixture(scope="module")
def served(gateway_settings: Settings, live_store, table_worker) -> Iterator[str]:
    """The gateway on a real loopback HTTP server (threaded: each seat's stream holds one
    connection while the other seat moves); its base URL. On one Redis only: what this
    proves is the document and the clients made from it, which no store changes, and
    the same routes run on the cluster in every other test of this package."""
    if live_store.cluster:
        pytest.skip("the generated clients' proof is the API's, the same on either store")
    app = create_app(Settings(**{**gateway_settings.__dict__, "decision_seconds": 300.0}))
    gw = app.extensions["cultists"]
    forget_gateway_keys(gw.redis, gateway_settings.task_broker_url)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        forget_gateway_keys(gw.redis, gateway_settings.task_broker_url)
        gw.close()


@pytest.fixture(scope="module")
def document(served: str, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_bytes(httpx.get(f"{served}/api/v1/openapi.json").content)
    return path


@pytest.fixture(scope="module")
def gen(document: Path, tmp_path_factory) -> Iterator[ModuleType]:
    """The Python client openapi-python-client generates from the served document."""
    out = tmp_path_factory.mktemp("client")
    config = out / "config.json"
    config.write_text(json.dumps({"post_hooks": [], "package_name_override": PACKAGE}))
    tool = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    assert tool, "openapi-python-client is a dev dependency (make install)"
    done = subprocess.run(
        [tool, "generate", "--path", str(document), "--output-path", str(out / PACKAGE), "--meta", "none",
         "--config", str(config)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, "the document generates without warnings"
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _api(gen: ModuleType, area: str, operation: str) -> Any:
    return importlib.import_module(f"{gen.__name__}.api.{area}.{operation}")


def _model(gen: ModuleType, name: str) -> Any:
    return getattr(importlib.import_module(f"{gen.__name__}.models"), name)


def _client(gen: ModuleType, base: str, token: str | None = None, session: str | None = None) -> Any:
    """A generated client: with a seat token (Bearer) and/or a player session."""
    headers = {"X-Player-Token": session} if session and token else {}
    timeout = httpx.Timeout(30.0)
    if token is not None:
        return gen.AuthenticatedClient(base_url=base, token=token, headers=headers, timeout=timeout)
    if session is not None:
        return gen.AuthenticatedClient(
            base_url=base, token=session, prefix="", auth_header_name="X-Player-Token", timeout=timeout
        )
    return gen.Client(base_url=base, timeout=timeout)


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, data) from a text/event-stream's lines."""
    event, data = None, []
    for line in lines:
        if line == "":
            if event is not None:
                yield event, json.loads("\n".join(data) or "null")
            event, data = None, []
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])


def _play_seat(
    gen: ModuleType, seat_client: Any, table: str, seed: int, out: dict[str, Any], most: int | None = None
) -> None:
    """Follow one seat through its stream (opened with a stream ticket) and move each time
    it is asked, until the game ends (or after `most` moves). Records what happened in `out`."""
    move_op = _api(gen, "matches", "make_move")
    ticket_op = _api(gen, "matches", "create_table_stream_ticket")
    stream_state = _model(gen, "StreamState")
    move_model = _model(gen, "Move")
    move_result, log_event = _model(gen, "MoveResult"), _model(gen, "LogEvent")
    rng = random.Random(seed)
    moves, last_moved = 0, -1
    ticket = ticket_op.sync(table_id=table, client=seat_client)
    assert isinstance(ticket, _model(gen, "StreamTicket")), ticket
    with seat_client.get_httpx_client().stream("GET", ticket.url, timeout=GAME_SECONDS) as reply:
        assert reply.status_code == 200
        for event, data in _sse(reply.iter_lines()):
            if event == "end":
                break
            if event not in ("state", "update"):
                continue
            state = stream_state.from_dict(data)  # the document's own shape for it
            if event == "update":  # the log's entries it follows, typed as the log's
                assert all(isinstance(e, log_event) and e.version <= state.version for e in state.events)
            if state.your_turn and state.version > last_moved:
                choice = rng.choice(state.legal_actions)
                result = move_op.sync_detailed(
                    table_id=table,
                    client=seat_client,
                    body=move_model(action=choice.id, version=state.version),
                    idempotency_key=str(uuid.uuid4()),
                )
                assert result.status_code == 200, result.content
                answer = result.parsed
                assert isinstance(answer, move_result) and answer.game == state.game
                assert all(isinstance(e, log_event) and e.version == answer.version for e in answer.events)
                last_moved, moves = state.version, moves + 1
                if most is not None and moves >= most:
                    break
    out["moves"] = moves


def _play(
    gen: ModuleType, base: str, table: str, seats: dict[int, Any], most: int | None = None
) -> dict[int, int]:
    """Every seat in `seats` (seat -> its client) played at once, to the end (or `most`
    moves each)."""
    results: dict[int, dict[str, Any]] = {s: {} for s in seats}
    errors: list[BaseException] = []

    def run(seat: int) -> None:
        try:
            _play_seat(gen, seats[seat], table, seat, results[seat], most)
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in seats]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GAME_SECONDS)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads), f"a seat was still playing after {GAME_SECONDS} s"
    if most is None:
        table_now = _api(gen, "lobby", "get_table").sync(table_id=table, client=_client(gen, base))
        assert table_now.status.value == "finished"
    return {s: r["moves"] for s, r in results.items()}


GAMES = {
    # game -> the table: two human seats, and bots where the game needs more players.
    # Shrine food to win lowered from TC-3's 6: random play then ends in ~100 decisions.
    "trash_cult": {"game": "trash_cult", "players": 2, "config": {"food_needed_2p": 3}},
    "crazy_cultists": {"game": "crazy_cultists", "players": 2, "config": {"two_players": True}},
    "tricky_cultists": {
        "game": "tricky_cultists",
        "seats": [
            {"kind": "human"},
            {"kind": "bot", "bot": "random"},
            {"kind": "human"},
            {"kind": "bot", "bot": "random"},
        ],
    },
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_generated_client_plays_a_whole_game_through_the_stream(gen, served, game):
    public = _client(gen, served)
    created = _api(gen, "lobby", "create_table").sync_detailed(
        client=public, body=_model(gen, "NewTable").from_dict(GAMES[game]), idempotency_key=str(uuid.uuid4())
    )
    assert (
        created.status_code == 201 and created.headers["Location"] == f"/api/v1/tables/{created.parsed.table}"
    )
    table = created.parsed
    humans = [s.seat for s in table.seats if s.kind.value == "human"]
    assert len(humans) == 2
    join = _api(gen, "lobby", "join_seat")
    seats = {}
    for seat in humans:
        claim = join.sync(table_id=table.table, seat=seat, client=public)
        seats[seat] = _client(gen, served, token=claim.token)
    moves = _play(gen, served, table.table, seats)
    assert all(count > 0 for count in moves.values()), moves


def test_a_retried_move_and_a_lost_join_through_the_generated_client(gen, served):
    public = _client(gen, served)
    table = _api(gen, "lobby", "create_table").sync(
        client=public, body=_model(gen, "NewTable").from_dict(GAMES["trash_cult"])
    )
    join = _api(gen, "lobby", "join_seat")
    key = str(uuid.uuid4())
    first = join.sync_detailed(table_id=table.table, seat=0, client=public, idempotency_key=key)
    lost_retry = join.sync_detailed(table_id=table.table, seat=0, client=public, idempotency_key=key)
    assert lost_retry.content == first.content and lost_retry.headers["Idempotent-Replayed"] == "true"
    session = _api(gen, "players", "sign_in_guest").sync(
        client=public, body=_model(gen, "GuestSignIn")(device=f"generated-{uuid.uuid4()}")
    )
    signed_in = _client(gen, served, session=session.token)
    join.sync(table_id=table.table, seat=1, client=signed_in)  # its answer is "lost"
    recovered = _api(gen, "lobby", "reissue_seat_token").sync(table_id=table.table, seat=1, client=signed_in)
    tokens = {0: first.parsed.token, 1: recovered.token}
    legal_of = _api(gen, "matches", "get_legal")
    mover = next(
        s for s in (0, 1)
        if legal_of.sync(table_id=table.table, client=_client(gen, served, tokens[s], session.token)).your_turn
    )  # fmt: skip
    seat_client = _client(gen, served, tokens[mover], session.token)
    legal = legal_of.sync(table_id=table.table, client=seat_client)
    move = _model(gen, "Move")(action=legal.legal_actions[0].id, version=legal.version)
    make_move = _api(gen, "matches", "make_move")
    key = str(uuid.uuid4())
    sent = make_move.sync_detailed(table_id=table.table, client=seat_client, body=move, idempotency_key=key)
    again = make_move.sync_detailed(table_id=table.table, client=seat_client, body=move, idempotency_key=key)
    assert sent.status_code == again.status_code == 200 and again.content == sent.content
    assert int(sent.headers["RateLimit-Remaining"]) >= 0
    now = _api(gen, "lobby", "get_table").sync(table_id=table.table, client=public)
    assert now.version == legal.version + 1, "the retry did not move again"


def test_matchmaking_through_the_generated_client_streams_and_bound_seats(gen, served):
    public = _client(gen, served)
    guest = _api(gen, "players", "sign_in_guest")
    enqueue = _api(gen, "matchmaking", "enqueue_ticket")
    ticket_stream = _api(gen, "matchmaking", "create_ticket_stream_ticket")
    sessions, tickets = [], []
    for _ in range(2):
        session = guest.sync(client=public, body=_model(gen, "GuestSignIn")(device=f"mm-{uuid.uuid4()}"))
        sessions.append(session.token)
        tickets.append(
            enqueue.sync(
                client=_client(gen, served, session=session.token),
                body=_model(gen, "NewTicket").from_dict({"game": "trash_cult", "players": 2}),
                idempotency_key=str(uuid.uuid4()),
            )
        )
    seats: dict[int, Any] = {}
    table = None
    for ticket, session in zip(tickets, sessions, strict=True):
        owner = _client(gen, served, ticket.token, session)  # a ticket is its player's: both tokens
        pass_ = ticket_stream.sync(ticket_id=ticket.ticket, client=owner)
        told = []
        with owner.get_httpx_client().stream("GET", pass_.url, timeout=GAME_SECONDS) as reply:
            for event, data in _sse(reply.iter_lines()):
                told.append(event)
                if event == "matched":
                    matched = _model(gen, "Ticket").from_dict(data)
                if event == "end":
                    break
        assert told[0] == "state" and told[-2:] == ["matched", "end"], told
        table = table or matched.table
        assert matched.table == table
        seats[matched.seat] = owner  # the ticket's token is now the seat's
    assert table is not None and sorted(seats) == [0, 1]
    unbound = _client(gen, served, tickets[0].token)
    refused = _api(gen, "matches", "get_legal").sync_detailed(table_id=table, client=unbound)
    assert refused.status_code == 401, "a bound seat's token alone acts for nobody"
    # Matchmaking deals the default rules (a long random game): each seat plays a few
    # decisions through its stream, then leaves, and its bot finishes the game.
    moves = _play(gen, served, table, seats, most=3)
    assert all(count == 3 for count in moves.values()), moves
    leave = _api(gen, "lobby", "leave_seat")
    for seat, owner in seats.items():
        left = leave.sync_detailed(table_id=table, seat=seat, client=owner, idempotency_key=str(uuid.uuid4()))
        assert left.status_code == 200, left.content


def test_typescript_types_from_the_document_type_check(document: Path, tmp_path):
    """openapi-typescript turns the served document into types; tsc --strict checks them
    with a client loop written against them (tests/gateway/ts/client.ts)."""
    generator, tsc = NODE_BIN / "openapi-typescript", NODE_BIN / "tsc"
    if not generator.exists() or not tsc.exists():
        pytest.skip("no node_modules (make install runs npm ci where node is installed)")
    work = tmp_path / "ts"
    shutil.copytree(TS_DIR, work)
    made = subprocess.run(
        [str(generator), str(document), "--output", str(work / "api.d.ts")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    checked = subprocess.run(
        [str(tsc), "--project", str(work / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=work,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
