"""Single-observer Information-Set MCTS (Cowling, Powley & Whitehouse, 2012), for every game.

The bot never looks at what its seat cannot see: each iteration starts from a
determinisation, a copy of the position in which every card hidden from the bot has been
re-dealt (`State.resample_hidden`) and the game's own generator reseeded, so neither the
true deal nor the future shuffles leak into the search. One tree is shared by all
determinisations; an edge is counted as "available" each time its action was legal in the
determinisation at hand, and UCB uses that count instead of the parent's visits, which is
what keeps actions that are only sometimes possible (an opponent's unseen card) from being
over- or under-explored.

Edges are keyed by the action's label rather than its integer, so two equivalent cards
(two "Favor 2" with different ids) share statistics.

Budget: `iterations=N` (exactly reproducible with the same seed) or `ms=T` (wall-clock,
for live tables where latency matters more than replay). Rollouts use the `random` or the
game's `heuristic` bot; `depth=D` stops a rollout after D decisions and scores the
position with the game's `evaluate` (if any).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from .game import GameSpec, State
from .rng import Rng


class _Node:
    __slots__ = ("avail", "children", "reward", "visits")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.avail = 1
        self.reward = 0.0


class ISMCTSBot:
    name = "ismcts"
    PARAMS: dict[str, Any] = {"iterations": int, "ms": float, "rollout": str, "c": float, "depth": int}

    def __init__(
        self,
        spec: GameSpec,
        seed: int = 0,
        iterations: int = 200,
        ms: float = 0.0,
        rollout: str = "random",
        c: float = 0.7,
        depth: int = 0,
    ) -> None:
        from .bots import make_bot
        from .errors import BadConfig

        if iterations < 1 and ms <= 0:
            raise BadConfig("ismcts needs iterations >= 1 or ms > 0")
        if rollout == "ismcts" or rollout.startswith("ismcts:"):
            raise BadConfig("ismcts cannot roll out with itself")
        self.spec = spec
        self.iterations = iterations
        self.ms = ms
        self.c = c
        self.depth = depth
        self.rng = random.Random(seed)
        self.rollout_bot = make_bot(spec, rollout, seed ^ 0x5EED)
        self.last_iterations = 0

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        root = _Node()
        determiniser = Rng(self.rng.getrandbits(64))
        deadline = time.perf_counter() + self.ms / 1000 if self.ms > 0 else None
        done = 0
        while True:
            if deadline is None:
                if done >= self.iterations:
                    break
            elif time.perf_counter() >= deadline and done > 0:
                break
            self._iterate(state, seat, root, determiniser)
            done += 1
        self.last_iterations = done
        labels = {state.action_label(a): a for a in legal}
        best = max(
            labels,
            key=lambda k: (
                (root.children[k].visits, root.children[k].reward) if k in root.children else (-1, 0)
            ),
        )
        return labels[best]

    def _iterate(self, root_state: State, observer: int, root: _Node, determiniser: Rng) -> None:
        state = root_state.clone()
        state.resample_hidden(observer, determiniser)
        state.rng = Rng(determiniser.next_u64())  # future shuffles are unknown too
        node = root
        path: list[tuple[_Node, int]] = []
        rng = self.rng
        # Selection and expansion.
        while not state.is_terminal():
            actor = state.to_act()[0]
            actions = state.legal_actions(actor)
            keyed = {state.action_label(a): a for a in actions}
            untried = [k for k in keyed if k not in node.children]
            for k in keyed:
                child = node.children.get(k)
                if child is not None:
                    child.avail += 1
            if untried:
                key = untried[int(rng.random() * len(untried))]
                child = node.children[key] = _Node()
            else:
                c = self.c
                key = max(
                    keyed,
                    key=lambda k: (
                        node.children[k].reward / node.children[k].visits
                        + c * math.sqrt(math.log(node.children[k].avail) / node.children[k].visits)
                    ),
                )
                child = node.children[key]
            state._apply(actor, keyed[key])
            state.decisions += 1
            path.append((child, actor))
            node = child
            if untried:
                break
        # Rollout.
        steps = 0
        bot = self.rollout_bot
        limit = self.depth if self.depth > 0 and self.spec.evaluate is not None else 0
        while not state.is_terminal():
            if limit and steps >= limit:
                break
            actor = state.to_act()[0]
            actions = state.legal_actions(actor)
            action = actions[0] if len(actions) == 1 else bot.choose(state, actor, actions)
            state._apply(actor, action)
            state.decisions += 1
            steps += 1
        if state.is_terminal() or self.spec.evaluate is None:
            values = state.returns()
        else:
            values = self.spec.evaluate(state)
        for child, actor in path:
            child.visits += 1
            child.reward += values[actor]
