"""Playing and replaying whole games in-process: the loop the CLI, sweeps and bench share."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bots import Bot, make_bot
from .config import config_to_dict
from .errors import SearchStopped
from .game import FISHER_YATES, SHUFFLES, GameSpec, State
from .rng import mix_seed


@dataclass
class GameRecord:
    """Everything needed to report a game and to replay it (rulings G-2)."""

    game: str
    players: int
    seed: int
    config: dict[str, Any]
    bots: list[str]
    winners: list[int]
    turns: int
    decisions: int
    returns: list[float]
    capped: bool
    actions: list[list[int]] = field(default_factory=list)  # [seat, action] pairs
    shuffle: str = SHUFFLES[FISHER_YATES]  # how it was dealt (game.SHUFFLES; fairness.md)

    def summary(self) -> dict[str, Any]:
        out = {
            "game": self.game,
            "seed": self.seed,
            "players": self.players,
            "bots": self.bots,
            "winners": self.winners,
            "turns": self.turns,
            "decisions": self.decisions,
            "returns": self.returns,
            "capped": self.capped,
        }
        if self.shuffle != SHUFFLES[FISHER_YATES]:  # absent: Fisher-Yates, as older records
            out["shuffle"] = self.shuffle
        return out


def bot_seed(game_seed: int, seat: int) -> int:
    """Each seat's bot gets its own stream, fixed by the game seed."""
    return mix_seed(game_seed, "bot", seat)


def play_game(
    spec: GameSpec,
    config: Any,
    players: int,
    seed: int,
    bot_specs: Sequence[str],
    record_actions: bool = True,
    deadline: float | None = None,
    shuffle: str | int | None = None,
) -> GameRecord:
    """Play one game to the end with the named bots, one per seat."""
    return play_to_end(spec, config, players, seed, bot_specs, record_actions, deadline, shuffle)[1]


def play_to_end(
    spec: GameSpec,
    config: Any,
    players: int,
    seed: int,
    bot_specs: Sequence[str],
    record_actions: bool = True,
    deadline: float | None = None,
    shuffle: str | int | None = None,
    stop: Callable[[], bool] | None = None,
    look: Callable[[State, int], None] | None = None,
) -> tuple[State, GameRecord]:
    """`play_game`, also handing back the final state (sweeps read facts from it).
    `deadline` (a `time.monotonic()` value): raise TimeoutError once it passes, between
    two decisions, so a caller serving a request can bound the whole game's time; a bot
    that searches (one with a `stop` hook, ismcts.py) is stopped inside a decision too
    (SearchStopped, a TimeoutError), so one long decision cannot outlive the deadline.
    `shuffle` names the deal's shuffle (game.SHUFFLES; None: Fisher-Yates).
    `stop`: asked between decisions and inside a search (the same hook); once it says yes
    the game ends with SearchStopped, so a cancelled sweep stops within moments even in a
    game of search bots that would run for minutes. It is asked often: a caller whose
    answer costs a round trip throttles it (sweeps/jobs.py).
    `look(state, seat)`: shown each position before its seat decides (the card reports
    watch hands with it, balance/sweeps/cards.py), so a watched game is this very loop."""
    if len(bot_specs) != players:
        raise ValueError(f"need {players} bots, got {len(bot_specs)}")
    state = spec.new_state(config, players, seed, None, shuffle)
    bots: list[Bot] = [make_bot(spec, b, bot_seed(seed, i)) for i, b in enumerate(bot_specs)]
    if deadline is not None or stop is not None:
        _stop_bots_at(bots, deadline, stop)
    actions: list[list[int]] = []
    record = actions.append
    while not state.is_terminal():
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"the game was not over after {state.decisions} decisions")
        if stop is not None and stop():
            raise SearchStopped(f"the game was stopped after {state.decisions} decisions")
        seat = state.to_act()[0]
        if look is not None:
            look(state, seat)
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0]
        state._apply(seat, action)
        state.decisions += 1
        if record_actions:
            record([seat, action])
    return state, _record(spec, state, list(bot_specs), actions)


def _stop_bots_at(bots: Sequence[Bot], deadline: float | None, stop: Callable[[], bool] | None) -> None:
    """Give every searching bot a stop hook that says yes once `deadline` passes or `stop`
    says so."""

    def past() -> bool:
        return (deadline is not None and time.monotonic() > deadline) or (stop is not None and stop())

    for bot in bots:
        if hasattr(bot, "stop"):
            bot.stop = past


def _record(spec: GameSpec, state: State, bots: list[str], actions: list[list[int]]) -> GameRecord:
    winners = state.winners()
    return GameRecord(
        game=spec.name,
        players=state.num_players,
        seed=state.seed,
        config=config_to_dict(state.config),
        bots=bots,
        winners=winners,
        turns=state.turn,
        decisions=state.decisions,
        returns=state.returns(),
        capped=not winners and state.turn >= getattr(state.config, "max_turns", 1 << 62),
        actions=actions,
        shuffle=SHUFFLES[state.shuffle],
    )


def replay(
    spec: GameSpec,
    config: Any,
    players: int,
    seed: int,
    actions: Sequence[Sequence[int]],
    deal_key: bytes | None = None,
    shuffle: str | int | None = None,
) -> State:
    """Rebuild a game from its record, checking every action (raises IllegalAction); a
    live table's record also holds its `deal_key` once the table is over, and a keyed
    deal's record its `shuffle` (fairness.md): a record without one was dealt by
    Fisher-Yates, and replays so."""
    state = spec.new_state(config, players, seed, deal_key, shuffle)
    for seat, action in actions:
        state.apply(seat, action)
    return state
