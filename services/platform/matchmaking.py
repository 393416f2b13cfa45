"""Grouping queued tickets into tables: a pure function, so it is unit-tested and benched
without Redis.

Tickets are taken oldest first. Each one, as a seed, gathers the nearest-rated tickets still
unmatched until the table is full, as long as the group's rating spread stays within the
seed's allowed gap; that gap widens the longer the seed has waited, so a player far from
everyone else still gets a game, and a crowded queue still pairs close ratings first. Once a
seed has waited `fill_with_bots_after` seconds it takes whoever fits and bots fill the rest.

The scan walks a doubly linked list over the tickets sorted by rating, so removing a
matched ticket is O(1) and the whole pass is O(n log n) for the sort plus O(n * seats).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MatchPolicy:
    # Rating units are OpenSkill mu (a new player starts at 25, sigma 25/3).
    base_gap: float = 3.0
    gap_per_second: float = 0.5
    max_gap: float = 50.0
    fill_with_bots_after: float = 30.0

    def allowed_gap(self, waited: float) -> float:
        return min(self.max_gap, self.base_gap + self.gap_per_second * max(0.0, waited))


@dataclass(frozen=True)
class Ticket:
    id: str
    rating: float
    enqueued_at: float


@dataclass(frozen=True)
class Group:
    """Tickets that sit at one table; `bots` seats are filled by bots."""

    tickets: tuple[str, ...]
    bots: int


def group_tickets(tickets: Sequence[Ticket], now: float, seats: int, policy: MatchPolicy) -> list[Group]:
    """Groups to seat now; tickets left out stay queued for the next pass."""
    if seats < 1:
        raise ValueError("a table has at least one seat")
    by_rating = sorted(range(len(tickets)), key=lambda i: tickets[i].rating)
    position = {ticket_index: pos for pos, ticket_index in enumerate(by_rating)}
    count = len(by_rating)
    prev = list(range(-1, count - 1))
    nxt = list(range(1, count + 1))
    nxt[-1:] = [-1] if count else []
    taken = [False] * count

    def unlink(pos: int) -> None:
        taken[pos] = True
        before, after = prev[pos], nxt[pos]
        if before >= 0:
            nxt[before] = after
        if after >= 0:
            prev[after] = before

    def rating_at(pos: int) -> float:
        return tickets[by_rating[pos]].rating

    groups: list[Group] = []
    for seed_index in sorted(range(len(tickets)), key=lambda i: tickets[i].enqueued_at):
        seed_pos = position[seed_index]
        if taken[seed_pos]:
            continue
        seed = tickets[seed_index]
        waited = now - seed.enqueued_at
        gap = policy.allowed_gap(waited)
        chosen = [seed_pos]
        low = high = seed.rating
        left, right = prev[seed_pos], nxt[seed_pos]
        while len(chosen) < seats:
            candidates = []
            if left >= 0 and high - rating_at(left) <= gap:
                candidates.append((seed.rating - rating_at(left), left))
            if right >= 0 and rating_at(right) - low <= gap:
                candidates.append((rating_at(right) - seed.rating, right))
            if not candidates:
                break
            _, pick = min(candidates)
            low, high = min(low, rating_at(pick)), max(high, rating_at(pick))
            chosen.append(pick)
            if pick == left:
                left = prev[left]
            else:
                right = nxt[right]
        if len(chosen) == seats or waited >= policy.fill_with_bots_after:
            for pos in chosen:
                unlink(pos)
            groups.append(
                Group(tuple(tickets[by_rating[pos]].id for pos in chosen), bots=seats - len(chosen))
            )
    return groups
