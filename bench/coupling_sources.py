"""Which randomness parts the paired games of a coupled sweep (bench/power.py, `sources`)?

The keyed deal (docs/fairness.md, "Coupled deals") couples the deck; once the missing Donut
is reached and the two games differ, three things could still keep them apart: (1) the
change itself (one seat holds another card and plays otherwise), (2) the game's generator,
one sequential stream, so that a steal or search in one game shifts every later refill's
salt, and (3) each heuristic bot's tie-break stream, shifted by a decision one game asks
and the other does not. This plays the bench's own pairs (Trash Cult, 2 players, heuristic
bots, base against `donuts=9`, the same seeds) with (2) or (3) re-coupled in several ways,
and for the stock code also splits the pairs into those that played the same game move for
move and the rest:

- game `stream`: the engines' keyed games as they are;
- game `turn`: every draw of the game's generator after setup from its own number, fixed by
  (seed, what is drawn: an active-deck shuffle, a chaos-deck shuffle, a steal, the turn,
  its count within the turn), so a draw one game makes shifts no other;
- game `count`: the same without the turn: the k-th active-deck shuffle of both games gets
  the same salt whenever it happens (a refill one turn earlier is still coupled);
- bot `stream`: the bots as they are (one tie-break salt drawn per decision);
- bot `const`: one salt per seat for the whole game (ties between the same actions are
  broken alike in both games whatever was decided before);
- bot `turn`: one salt per seat and turn.

Every variant deals and breaks ties uniformly (the salts are SplitMix64 mixes of distinct
inputs); they differ only in which draws the paired games share. Instrumentation, not the
engines: the generator is a stand-in object set on the state after its (unchanged) keyed
setup, and the bot scores with the heuristic's own table.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from services.engines.core.play import bot_seed
from services.engines.core.rng import coupled_order, keyed_order, mix_seed, tie_key
from services.engines.registry import load_game
from services.engines.trash_cult import bots as trash_bots
from services.engines.trash_cult.cards import RAT

SEED = 20240101  # bench/power.py's `coupled`: the same seeds, so `stream/stream` is its keyed arm
# (game mode, bot mode) pairs measured, the stock code first.
MODES = (
    ("stream", "stream"),
    ("turn", "stream"),
    ("count", "stream"),
    ("stream", "const"),
    ("stream", "turn"),
    ("turn", "const"),
)


class _KeyedDraws:
    """A stand-in for the game's generator whose every draw is its own number (`turn`,
    `count`): the rules call only these methods after setup."""

    def __init__(self, state: Any, seed: int, by_turn: bool) -> None:
        self.state_of, self.seed, self.by_turn = state, seed, by_turn
        self.counts: dict[tuple[Any, ...], int] = {}
        self.state = 0

    def _salt(self, what: str) -> int:
        key: tuple[Any, ...] = (what, self.state_of.turn) if self.by_turn else (what,)
        k = self.counts.get(key, 0)
        self.counts[key] = k + 1
        return mix_seed(self.seed, *key, k)

    def copy(self) -> _KeyedDraws:
        return self

    def next_u64(self) -> int:
        return self._salt("u64")

    def below(self, n: int) -> int:
        return (self._salt("below") * n) >> 64

    def keyed_shuffle(self, items: list[int], tags: tuple[int, ...]) -> None:
        chaos = bool(items) and items[0] >= self.state_of.config.active_cards
        keyed_order(items, tags, self._salt("chaos" if chaos else "active"))

    def coupled_shuffle(self, items: list[int], kinds: Any, reference: Any) -> None:
        coupled_order(items, kinds, reference, self._salt("deal"))


class _TieBot:
    """Trash Cult's heuristic with its tie-break salt drawn as the mode says."""

    def __init__(self, spec: Any, seed: int, mode: str) -> None:
        self.stock = trash_bots.HeuristicBot(spec, seed)
        self.seed, self.mode = seed, mode
        self.salt = mix_seed(seed, "const")
        self.counts: dict[int, int] = {}

    def choose(self, state: Any, seat: int, legal: list[int]) -> int:
        if self.mode == "stream":
            return self.stock.choose(state, seat, legal)
        if self.mode == "const":
            salt = self.salt
        elif self.mode == "turn":
            salt = mix_seed(self.seed, state.turn)
        else:
            k = self.counts.get(state.turn, 0)
            self.counts[state.turn] = k + 1
            salt = mix_seed(self.seed, state.turn, k)
        table = trash_bots._Table(state.view(seat), seat, state.config)
        return max((table.score(a), tie_key(salt, a), a) for a in legal)[2]


def _play(config: Any, seed: int, game_mode: str, bot_mode: str) -> tuple[bool, bool, list[int]]:
    """One keyed game: (the Rat cult sat, it won, the actions)."""
    spec = load_game("trash_cult")
    state = spec.new_state(config, 2, seed, None, "keyed")
    if game_mode != "stream":
        state.rng = _KeyedDraws(state, seed, game_mode == "turn")
    bots = [_TieBot(spec, bot_seed(seed, i), bot_mode) for i in range(2)]
    actions = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0]
        state._apply(seat, action)
        state.decisions += 1
        actions.append(action)
    cults = list(state.cult)  # type: ignore[attr-defined]  # a TrashCultState
    return RAT in cults, any(cults[s] == RAT for s in state.winners()), actions


def _pairs(args: tuple[int, int, str, str]) -> list[tuple[bool, bool, bool]]:
    """(Rat won in base, in the variant, the two played the same game) of the pairs in
    [start, stop) where the Rat cult sat in both."""
    start, stop, game_mode, bot_mode = args
    out = []
    for index in range(start, stop):
        a = _play(None, SEED + index, game_mode, bot_mode)
        b = _play({"donuts": 9}, SEED + index, game_mode, bot_mode)
        if a[0] and b[0]:
            out.append((a[1], b[1], a[2] == b[2]))
    return out


def _share(pairs: list[tuple[bool, bool, bool]]) -> dict[str, Any]:
    n = len(pairs)
    if n == 0:
        return {"pairs": 0}
    p_a = sum(a for a, _b, _s in pairs) / n
    p_b = sum(b for _a, b, _s in pairs) / n
    discordant = sum(a != b for a, b, _s in pairs)
    expected = (p_a * (1 - p_b) + p_b * (1 - p_a)) * n
    return {
        "pairs": n,
        "rat_base": round(p_a, 4),
        "rat_variant": round(p_b, 4),
        "discordant": discordant,
        "independent_expectation": round(expected, 1),
        "share": round(discordant / expected, 3) if expected else None,
        # binomial standard error of the discordant count, carried to the share
        "share_se": round((discordant**0.5) / expected, 3) if expected else None,
    }


def sources(games: int, processes: int) -> dict[str, Any]:
    """Each mode's discordant share on the same `games` seeds; the stock mode also split
    into the pairs that played the same game and those that parted."""
    out: dict[str, Any] = {"games": games, "variant": "donuts=9", "players": 2, "modes": []}
    step = 250
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
    with pool:  # one pool for every mode: a spawned process imports the engines once
        for game_mode, bot_mode in MODES:
            out["modes"].append(_mode(pool, games, step, game_mode, bot_mode))
    return out


def _mode(pool: ProcessPoolExecutor, games: int, step: int, game_mode: str, bot_mode: str) -> dict[str, Any]:
    """One mode's pairs, chunk by chunk in the pool, and their shares."""
    started = time.perf_counter()
    jobs = [(s, min(s + step, games), game_mode, bot_mode) for s in range(0, games, step)]
    pairs = [p for part in pool.map(_pairs, jobs) for p in part]
    row = {"game": game_mode, "bot": bot_mode, **_share(pairs)}
    row["same_game"] = round(sum(s for _a, _b, s in pairs) / max(len(pairs), 1), 3)
    if (game_mode, bot_mode) == MODES[0]:
        row["parted_only"] = _share([p for p in pairs if not p[2]])
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row
