"""The strength ladder: bots play each other with seats rotated on the same deals.

A card game's seats are not equal (the first player moves first, a partner leads), and one
deal can favour one hand, so a fair comparison plays every deal once per line-up, rotating
the bots through the seats: each bot sits in every seat equally often, on the same cards,
and the seat and deal effects cancel instead of being mistaken for strength.

The unit of the line-up is a *slot*: a seat in a free-for-all game, a partnership in a team
game (Tricky Cultists, TK-2: seats 0+2 against 1+3). Both partners of a slot play the same
bot, and rotating the slots swaps the partnerships on the same deals.

Line-ups, for B bots and S slots (every bot sits in every slot equally often):

- B <= S: slot i gets bot (i + r) mod B, for r in 0..B-1. Two bots at a 4-seat table play
  A B A B and B A B A; three bots at four seats play A B C A, B C A B, C A B C.
- B > S: every S-bot subset of the bots plays all S of its rotations (a round robin).

Per pair of bots it reports how often one finished ahead of the other (head to head),
with the 95% Wilson interval of that rate. Per bot the ladder reports the games it won (any of its slots among the winners; draws
are no win), the 95% Wilson interval of that rate, its fair share (the share of slots it
held: what it would win if every bot were equal) and an OpenSkill (Plackett-Luce) rating
fitted on each game's finishing order: winners first, then the other bots by the game's
`evaluate` of the final position when it has one, else tied. Games are rated in seed
order once all are played, so the ratings do not depend on `jobs`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .bots import make_bot
from .config import config_to_dict
from .errors import BadConfig
from .game import GameSpec, State
from .play import play_to_end
from .pools import pool_context
from .stats import wilson


def slot_seats(spec: GameSpec, players: int) -> list[list[int]]:
    """The seats each slot of a line-up fills: one seat each, or a partnership (GameSpec.teams)."""
    return spec.team_seats(players)


def lineups(bots: int, slots: int) -> list[tuple[int, ...]]:
    """Bot indices per slot for every line-up a deal is played in (see the module doc)."""
    if bots < 2:
        raise BadConfig("a ladder needs at least two bots")
    if bots <= slots:
        return [tuple((i + r) % bots for i in range(slots)) for r in range(bots)]
    out = []
    for subset in itertools.combinations(range(bots), slots):
        out += [tuple(subset[(i + r) % slots] for i in range(slots)) for r in range(slots)]
    return out


def check_bots(spec: GameSpec, bots: Sequence[str]) -> None:
    """Refuse a bad line-up before anything is played: BadConfig names the problem."""
    if len(bots) < 2:
        raise BadConfig(f"a ladder needs at least two bots, got {list(bots)}")
    if len(set(bots)) != len(bots):
        raise BadConfig(f"each bot may appear once in a ladder, got {list(bots)}")
    for b in bots:
        make_bot(spec, b, 0)  # an unknown name or parameter raises here, with the known ones


@dataclass(frozen=True)
class GameResult:
    """One played game of the ladder, in the form the parent process rates."""

    deal: int  # index of the deal (game seed = ladder seed + deal)
    lineup: int  # index into the line-up list
    winners: list[int]  # winning seats; empty for a draw
    order: list[int]  # rank per slot, 1 = best (winners first)
    decisions: int
    turns: int


@dataclass
class BotStanding:
    """One bot's line of the ladder table."""

    bot: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    slots: int = 0  # slots held, summed over its games (for the fair share)
    mu: float = 0.0
    sigma: float = 0.0

    def to_dict(self, slots_per_game: int) -> dict[str, Any]:
        lo, hi = wilson(self.wins, self.games)
        fair = self.slots / (slots_per_game * self.games) if self.games else 0.0
        return {
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "win_rate": self.wins / self.games if self.games else 0.0,
            "wilson_low": lo,
            "wilson_high": hi,
            "fair_share": fair,
            "beats_fair_share": lo > fair,
            "mu": self.mu,
            "sigma": self.sigma,
            "ordinal": self.mu - 3 * self.sigma,
        }


@dataclass
class LadderResult:
    """Everything a ladder run measured; `to_dict` is the `--json` form."""

    game: str
    players: int
    config: dict[str, Any]
    bots: list[str]
    slots: list[list[int]]
    lineups: list[list[str]]
    deals: int
    seed: int
    standings: list[BotStanding]
    games: int = 0
    draws: int = 0
    decisions: int = 0
    seconds: float = 0.0
    head_to_head: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        per_game = len(self.slots)
        return {
            "game": self.game,
            "players": self.players,
            "config": self.config,
            "bots": self.bots,
            "slots": self.slots,
            "lineups": self.lineups,
            "deals": self.deals,
            "seed": self.seed,
            "games": self.games,
            "draws": self.draws,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
            "standings": [s.to_dict(per_game) for s in self.standings],
            "head_to_head": self.head_to_head,
            "head_to_head_rates": head_to_head_rates(self.bots, self.head_to_head),
        }


def head_to_head_rates(bots: Sequence[str], h2h: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """Each pair of bots once: how often the first finished ahead of the second, with its
    95 % Wilson interval, among the games where one of them finished ahead of the other
    (games both won, or both lost at the same rank, tell nothing between them)."""
    rows = []
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            wins, losses = h2h.get(a, {}).get(b, 0), h2h.get(b, {}).get(a, 0)
            decided = wins + losses
            lo, hi = wilson(wins, decided)
            rows.append(
                {
                    "bot": a,
                    "opponent": b,
                    "wins": wins,
                    "losses": losses,
                    "rate": wins / decided if decided else 0.0,
                    "wilson_low": lo,
                    "wilson_high": hi,
                }
            )
    return rows


def play_ladder(
    spec: GameSpec,
    config: Any,
    players: int,
    bots: Sequence[str],
    deals: int,
    seed: int = 0,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    chunk: int = 0,
) -> LadderResult:
    """Play every deal in every line-up and rate the bots.

    `progress(n)` is called with the number of games just finished. `chunk` is how many
    deals one worker task plays (0: chosen from the size of the run).
    """
    bots = list(bots)
    check_bots(spec, bots)
    if deals < 1:
        raise BadConfig("a ladder needs at least one deal (--games >= 1)")
    if jobs < 1:
        raise BadConfig("--jobs must be at least 1")
    if config is None or isinstance(config, dict):
        config = spec.make_config(config)
    slots = slot_seats(spec, players)
    plan = lineups(len(bots), len(slots))
    seat_bots = [_seats(spec, slots, [bots[i] for i in lineup], players) for lineup in plan]
    config_dict = config_to_dict(config)
    chunk = chunk or max(1, min(25, deals // (8 * jobs) or 1))
    tasks = [
        (spec.name, config_dict, players, seed, seat_bots, slots, list(range(lo, min(lo + chunk, deals))))
        for lo in range(0, deals, chunk)
    ]
    start = time.perf_counter()
    results: list[GameResult] = []
    if jobs == 1:
        for task in tasks:
            done = _play_deals(task)
            results += done
            if progress:
                progress(len(done))
    else:
        context = pool_context([__name__, "services.engines.registry"])
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            for done in pool.map(_play_deals, tasks):
                results += done
                if progress:
                    progress(len(done))
    elapsed = time.perf_counter() - start
    results.sort(key=lambda r: (r.deal, r.lineup))
    return _tally(spec, players, config_dict, bots, slots, plan, deals, seed, results, elapsed)


def _seats(spec: GameSpec, slots: list[list[int]], slot_bots: list[str], players: int) -> list[str]:
    seats = [""] * players
    for bot, seats_of_slot in zip(slot_bots, slots, strict=True):
        for s in seats_of_slot:
            seats[s] = bot
    return seats


def _play_deals(task: tuple[Any, ...]) -> list[GameResult]:
    """Worker: play some deals in every line-up (top level, so a process pool can call it)."""
    from services.engines.registry import load_game

    game, config_dict, players, seed, seat_bots, slots, deals = task
    spec = load_game(game)
    config = spec.make_config(config_dict)
    out = []
    for deal in deals:
        for index, seats in enumerate(seat_bots):
            final, record = play_to_end(spec, config, players, seed + deal, seats, record_actions=False)
            out.append(
                GameResult(
                    deal=deal,
                    lineup=index,
                    winners=record.winners,
                    order=_finishing_order(spec, final, slots, record.winners),
                    decisions=record.decisions,
                    turns=record.turns,
                )
            )
    return out


def _finishing_order(spec: GameSpec, final: State, slots: list[list[int]], winners: list[int]) -> list[int]:
    """Rank per slot, 1 = best: winners first, then the rest by the game's `evaluate` of
    the final position (public progress: candles, Shrine food), ties sharing a rank.
    A draw ranks every slot first."""
    if not winners:
        return [1] * len(slots)
    won = set(winners)
    values = spec.evaluate(final) if spec.evaluate is not None else [0.0] * final.num_players
    keys = [
        (0 if won.intersection(seats) else 1, -round(max(values[s] for s in seats), 9)) for seats in slots
    ]
    distinct = sorted(set(keys))
    return [distinct.index(k) + 1 for k in keys]


def _tally(
    spec: GameSpec,
    players: int,
    config_dict: dict[str, Any],
    bots: list[str],
    slots: list[list[int]],
    plan: list[tuple[int, ...]],
    deals: int,
    seed: int,
    results: list[GameResult],
    elapsed: float,
) -> LadderResult:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=b) for b in bots]
    standings = [BotStanding(bot=b) for b in bots]
    h2h = {a: dict.fromkeys((b for b in bots if b != a), 0) for a in bots}
    out = LadderResult(
        game=spec.name,
        players=players,
        config=config_dict,
        bots=bots,
        slots=slots,
        lineups=[[bots[i] for i in lineup] for lineup in plan],
        deals=deals,
        seed=seed,
        standings=standings,
        head_to_head=h2h,
    )
    for r in results:
        lineup = plan[r.lineup]
        present = sorted(set(lineup))
        best = {
            b: min(rank for slot_bot, rank in zip(lineup, r.order, strict=True) if slot_bot == b)
            for b in present
        }
        out.games += 1
        out.decisions += r.decisions
        out.draws += not r.winners
        for b in present:
            st = standings[b]
            st.games += 1
            st.slots += lineup.count(b)
            st.draws += not r.winners
            if r.winners and best[b] == 1:
                st.wins += 1
                for other in present:
                    if other != b and best[other] > 1:
                        h2h[bots[b]][bots[other]] += 1
        new = model.rate([[ratings[b]] for b in present], ranks=[best[b] for b in present])
        for b, team in zip(present, new, strict=True):
            ratings[b] = team[0]
    for st, rating in zip(standings, ratings, strict=True):
        st.mu, st.sigma = rating.mu, rating.sigma
    out.seconds = elapsed
    return out
