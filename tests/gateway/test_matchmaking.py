"""Matchmaking: the pure grouping (close ratings first, gap widening with wait, bots
filling) and the Redis-backed queue: tickets, cancel, tables, ratings, time to match."""

from __future__ import annotations

import contextlib
import random

from services.engines.registry import available_games
from services.platform.keys import forming_key, queue_key, ticket_key
from services.platform.matchmaking import MatchPolicy, Ticket, group_tickets
from services.platform.ratings import DEFAULT
from tests.support.staff import session_of

from .conftest import bearer
from .support import sign_in_guest, wait_for

GAME = available_games()[0]
# Crazy Cultists (the first game) plays 2 only as a sweep variant (CC-2): tables of 3.
PLAYERS = 3
POLICY = MatchPolicy(base_gap=2.0, gap_per_second=1.0, max_gap=40.0, fill_with_bots_after=30.0)


def test_close_ratings_are_grouped_first():
    tickets = [Ticket("a", 20.0, 0), Ticket("b", 30.0, 0), Ticket("c", 21.0, 0), Ticket("d", 31.0, 0)]
    groups = group_tickets(tickets, now=0, seats=2, policy=POLICY)
    assert sorted(sorted(g.tickets) for g in groups) == [["a", "c"], ["b", "d"]]
    assert all(g.bots == 0 for g in groups)


def test_nearest_partner_is_chosen_even_when_a_wider_gap_is_allowed():
    tickets = [Ticket("old", 25.0, 0), Ticket("far", 35.0, 9), Ticket("near", 26.0, 9)]
    (group,) = group_tickets(tickets, now=20, seats=2, policy=POLICY)
    assert set(group.tickets) == {"old", "near"}


def test_gap_widens_with_waiting():
    tickets = [Ticket("low", 20.0, 100.0), Ticket("high", 27.0, 100.0)]
    assert group_tickets(tickets, now=100.0, seats=2, policy=POLICY) == []
    assert group_tickets(tickets, now=104.0, seats=2, policy=POLICY) == []  # gap 6 < 7
    (group,) = group_tickets(tickets, now=105.0, seats=2, policy=POLICY)  # gap 7
    assert set(group.tickets) == {"low", "high"}


def test_spread_of_a_bigger_table_stays_within_the_gap():
    tickets = [Ticket(str(r), float(r), 0) for r in (10, 11, 12, 14, 30)]
    groups = group_tickets(tickets, now=1.0, seats=3, policy=POLICY)  # gap 3
    assert [sorted(g.tickets) for g in groups] == [["10", "11", "12"]]


def test_bots_fill_only_after_the_wait():
    lonely = [Ticket("x", 25.0, 0.0)]
    assert group_tickets(lonely, now=29.0, seats=4, policy=POLICY) == []
    (group,) = group_tickets(lonely, now=30.0, seats=4, policy=POLICY)
    assert group.tickets == ("x",) and group.bots == 3


def test_many_tickets_are_grouped_validly():
    rng = random.Random(3)
    tickets = [Ticket(str(i), rng.gauss(25, 8), rng.uniform(0, 60)) for i in range(10_000)]
    groups = group_tickets(tickets, now=60.0, seats=4, policy=POLICY)
    by_id = {t.id: t for t in tickets}
    seen = [t for g in groups for t in g.tickets]
    assert len(seen) == len(set(seen)), "no ticket sits at two tables"
    for g in groups:
        ratings = [by_id[t].rating for t in g.tickets]
        oldest = min(by_id[t].enqueued_at for t in g.tickets)
        assert max(ratings) - min(ratings) <= POLICY.allowed_gap(60.0 - oldest) + 1e-9
        assert g.bots == 0 or 60.0 - oldest >= POLICY.fill_with_bots_after
    assert len(seen) > 9_000


def _ticket(client, player: str, players: int = PLAYERS) -> dict:
    """A guest named `player` signs in and queues; `headers` carry the ticket's token and
    the player's session, which a ticket (and then its seat) needs together."""
    session = sign_in_guest(client, player)
    reply = client.post(
        "/api/matchmaking/tickets",
        json={"game": GAME, "players": players, "player": player},
        headers=session["headers"],
    )
    assert reply.status_code == 201, reply.get_json()
    ticket = reply.get_json()
    assert ticket["player_id"] == session["player"]
    return {**ticket, "headers": {**bearer(ticket["token"]), **session["headers"]}}


def _seated(
    client, gw, ticket: dict, players: int = PLAYERS, now: float | None = None, ours: set | None = None
) -> str:
    """Run matchmaking passes until the ticket sits at a table; that table's id.

    A table worker may be running (a package fixture): the gateway queues a pass for it
    when a ticket joins, and while that pass holds the queue's lock ours finds nothing to
    do. Whichever pass seats the ticket, the table is the same one, which is what counts.
    """

    def table() -> str | None:
        formed = gw.matchmaking.match(GAME, players, now)
        if ours is not None:
            ours.update(formed)
        status = client.get(
            f"/api/matchmaking/tickets/{ticket['ticket']}", headers=ticket["headers"]
        ).get_json()
        return status["table"] if status["status"] == "matched" else None

    return wait_for(table, timeout=15, what=f"ticket {ticket['ticket']} to be seated")


def test_queue_match_and_ticket_token_is_the_seat_token(client, app):
    gw = app.extensions["cultists"]
    a, b, c = _ticket(client, "ann"), _ticket(client, "bob"), _ticket(client, "cal")
    assert a["status"] == "queued" and a["rating"] == DEFAULT[0]
    operator = session_of(client, gw.redis, "operator")  # /metrics is an operator's (test_roles.py)
    assert "cultists_gateway_queued_tickets" in client.get("/metrics", headers=operator).get_data(
        as_text=True
    )
    ours: set[str] = set()
    tid = _seated(client, gw, a, ours=ours)
    for ticket in (a, b, c):
        status = client.get(
            f"/api/matchmaking/tickets/{ticket['ticket']}", headers=ticket["headers"]
        ).get_json()
        assert status["status"] == "matched" and status["table"] == tid
        view = client.get(f"/api/tables/{status['table']}/view", headers=ticket["headers"]).get_json()
        assert view["seat"] == status["seat"]
    table = client.get(f"/api/tables/{tid}").get_json()
    assert table["rated"] and table["source"] == "matchmaking" and table["status"] == "playing"
    assert {s["player"] for s in table["seats"]} == {"ann", "bob", "cal"}
    metrics = client.get("/metrics", headers=operator).get_data(as_text=True)
    if tid in ours:  # else a table worker's pass seated them: its process observed the waits
        assert "cultists_gateway_time_to_match_seconds_count 3.0" in metrics
    assert 'cultists_gateway_open_tables{status="playing"} 1.0' in metrics


def test_cancel(client, app):
    gw = app.extensions["cultists"]
    t = _ticket(client, "cat")
    url = f"/api/matchmaking/tickets/{t['ticket']}"
    assert client.delete(url).status_code == 401
    assert client.delete(url, headers=bearer("nope")).status_code == 403
    assert client.delete(url, headers=t["headers"]).get_json()["status"] == "cancelled"
    assert client.delete(url, headers=t["headers"]).status_code == 409
    dan = _ticket(client, "dan")
    assert gw.matchmaking.match(GAME, PLAYERS) == [], "a cancelled ticket is not matched"
    status = client.get(f"/api/matchmaking/tickets/{dan['ticket']}", headers=dan["headers"]).get_json()
    assert status["status"] == "queued", "nor by any other pass"
    assert client.get("/api/matchmaking/tickets/0" * 3).status_code == 404
    signed_in = sign_in_guest(client, "eli")["headers"]
    assert client.post("/api/matchmaking/tickets", json={}, headers=signed_in).status_code == 400
    assert client.post("/api/matchmaking/tickets", json={"game": GAME}).status_code == 401, "rated: sign in"


def test_a_table_size_the_default_rules_refuse_is_refused_when_queued(client, app):
    """Matchmaking plays the default rules: 2-player Crazy Cultists needs CC-2's switch."""
    gw = app.extensions["cultists"]
    reply = client.post(
        "/api/matchmaking/tickets",
        json={"game": "crazy_cultists", "players": 2, "player": "ivy"},
        headers=sign_in_guest(client, "ivy")["headers"],
    )
    assert reply.status_code == 400 and "two_players" in reply.get_json()["error"]["message"]
    assert not gw.redis.exists(queue_key("crazy_cultists", 2)), "nothing was queued"


def test_bots_fill_a_waiting_ticket_and_the_rating_updates_at_the_end(client, app, table_worker):
    gw = app.extensions["cultists"]
    t = _ticket(client, "eve")
    created = gw.redis.hget(ticket_key(GAME, PLAYERS, t["ticket"]), "created")
    assert gw.matchmaking.match(GAME, PLAYERS, float(created) + 1) == []
    assert (
        client.get(f"/api/matchmaking/tickets/{t['ticket']}", headers=t["headers"]).get_json()["status"]
        == "queued"
    ), "no bots before the wait is over"
    # Once it is over, this pass (or beat's, if it runs) fills the table with bots.
    tid = _seated(client, gw, t, now=float(created) + gw.settings.match_policy.fill_with_bots_after)
    headers = t["headers"]

    def my_turn_or_over():
        view = client.get(f"/api/tables/{tid}/view", headers=headers).get_json()
        return view if view["legal_actions"] or view["terminal"] else None

    while True:
        view = wait_for(my_turn_or_over, timeout=30, what="eve's turn")
        if view["terminal"]:
            break
        move = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
        client.post(f"/api/tables/{tid}/actions", json=move, headers=headers)

    def rated():
        # The seat that ends the game settles the ratings after its commit: when a bot made
        # the last move, that is the table worker, a moment after the view says terminal.
        rating = client.get(f"/api/matchmaking/ratings/{GAME}/{t['player_id']}").get_json()
        return rating if (rating["mu"], rating["sigma"]) != DEFAULT else None

    rating = wait_for(rated, timeout=15, what="eve's rating to be settled")
    assert rating["sigma"] < DEFAULT[1], "a rated game makes the rating more certain"
    assert gw.store.to_rate() == []


def test_a_new_ticket_triggers_matching_on_the_worker(client, table_worker):
    tickets = [_ticket(client, "fay"), _ticket(client, "gus"), _ticket(client, "hal")]

    def matched():
        return all(
            client.get(f"/api/matchmaking/tickets/{t['ticket']}", headers=t["headers"]).get_json()["status"]
            == "matched"
            for t in tickets
        )

    wait_for(matched, timeout=20, what="the worker to match the tickets")


def test_a_pass_that_dies_before_writing_its_table_leaves_no_dangling_ticket(client, app, monkeypatch):
    """A pass marks its tickets matched, then writes the table. Dying in between (or a
    reader arriving in between) must never hand out a table id that answers 404: the
    first reader writes the formed table from its plan, and the beat writes the rest."""
    gw = app.extensions["cultists"]
    tickets = [_ticket(client, name) for name in ("fay", "gus", "hal")]

    def died(*_args) -> None:
        raise ConnectionError("the matching process died here")

    with monkeypatch.context() as patch:
        patch.setattr(gw.matchmaking, "_write_formed", died)
        with contextlib.suppress(ConnectionError):
            gw.matchmaking.match(GAME, PLAYERS)
    formed = gw.redis.hkeys(forming_key(GAME, PLAYERS))
    status = client.get(
        f"/api/matchmaking/tickets/{tickets[0]['ticket']}", headers=tickets[0]["headers"]
    ).get_json()
    if status["status"] != "matched":  # a table worker's pass got the lock first: seat by it
        status = {"table": _seated(client, gw, tickets[0])}
    elif formed:  # ours was the pass that seated them (not a table worker's): it left its plan
        assert formed == [status["table"].encode()]
    table = client.get(f"/api/tables/{status['table']}")
    assert table.status_code == 200, table.get_json()
    assert {s["player"] for s in table.get_json()["seats"]} == {"fay", "gus", "hal"}
    assert gw.matchmaking.finish_forming() == 0, "the reader wrote it; nothing left half formed"
