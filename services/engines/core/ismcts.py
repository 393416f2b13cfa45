"""Single-observer Information-Set MCTS (Cowling, Powley & Whitehouse, 2012), for every game.

The bot never looks at what its seat cannot see. Each search starts from a *canonical*
copy of the position, in which every zone whose order the seat cannot see is sorted (found
by re-dealing probes, kept only where the seat's view is unchanged), so the search depends
on the information set alone, never on where the hidden cards really lie: re-deal them
before asking and the bot, with the same seed, picks the same move. Each iteration then
plays on a determinisation, a copy of that position with every hidden card re-dealt
(`State.resample_hidden`) and the game's own generator reseeded, so neither the true deal
nor the future shuffles leak into the search.

One tree is shared by all determinisations. An edge is counted as "available" each time
its action was legal in the determinisation at hand, and UCB uses that count instead of
the parent's visits, which keeps actions that are only sometimes possible (an opponent's
unseen card) from being over- or under-explored. Edges are keyed by the action integer:
every game names cards of one kind by their kind (or a card by its unique id), so equal
choices already share an integer and no label needs formatting in the inner loop.

Budget: `iterations=N` (exactly reproducible with the same seed) or `ms=T` (wall-clock,
for live tables where latency matters more than replay). Rollouts use the `random` bot or
the game's `heuristic` bot; `depth=D` (default 10, 0 = to the end) stops a rollout after D
decisions and scores the position with the game's `evaluate` (public progress), which buys
many more iterations per second in long games. `prior=W` (default 1, 0 = off) is a
progressive bias toward the game's heuristic: at each node the heuristic's move is expanded
first and gets W / (visits + 1) added to its UCB score. At the small budgets a balance sweep
can afford, that turns the search from "random play, corrected" into "the heuristic,
corrected where the search sees better", and it models opponents as the heuristic plays.
`c` is the UCB exploration constant on rewards in [0, 1]. docs/bots.md has the measurements
behind these defaults.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from .errors import SearchStopped
from .game import GameSpec, State
from .rng import Rng

_yield_gil = time.sleep
# Seconds of search between two offers of the GIL (below). An iteration takes well under a
# millisecond, compiled, and each offer is a syscall that a busy machine may answer by
# running another process first: offering it once an iteration cost a loaded search ~40% of
# its time, where offering it on a clock keeps the engine server's other threads waiting no
# longer than this.
_YIELD_EVERY = 0.001


class _SearchRng(random.Random):
    """The generator a determinisation runs on: `Rng`'s interface, several times faster.

    A search re-deals the hidden cards and reshuffles decks thousands of times a second;
    SplitMix64 in pure Python (the game's own generator, kept for exact replays) is the
    largest single cost there. Inside a search nothing is replayed or serialised, so the
    C Mersenne Twister does, seeded from the bot's seed to keep searches reproducible.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.seed_value = seed
        rand = self.random
        self._key = lambda _card: rand()

    @property
    def state(self) -> int:  # read only by State.clone / to_json, which a search never needs
        return self.seed_value

    def next_u64(self) -> int:
        return self.getrandbits(64)

    def below(self, n: int) -> int:
        return int(self.random() * n)

    def shuffle(self, items: Any) -> None:
        """A uniform permutation: sort by random keys (one C sort, no Python swap loop)."""
        items.sort(key=self._key)

    def keyed_shuffle(self, items: list[int], tags: tuple[int, ...]) -> None:
        """A keyed deal's reshuffle inside a search: any uniform permutation will do, since
        no second deck is coupled to a determinisation's."""
        items.sort(key=self._key)

    def coupled_shuffle(self, items: list[int], kinds: Any, reference: Any) -> None:
        items.sort(key=self._key)

    def fork(self, salt: int) -> _SearchRng:
        return _SearchRng(self.getrandbits(64) ^ salt)


class _Node:
    __slots__ = ("avail", "children", "hint", "reward", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.avail = 1
        self.reward = 0.0
        self.hint = -1  # the guide bot's pick here, when `prior` is on; -1 not asked yet


class ISMCTSBot:
    name = "ismcts"
    PARAMS: dict[str, Any] = {
        "iterations": int,
        "ms": float,
        "rollout": str,
        "c": float,
        "depth": int,
        "prior": float,
    }

    def __init__(
        self,
        spec: GameSpec,
        seed: int = 0,
        iterations: int = 200,
        ms: float = 0.0,
        rollout: str = "random",
        c: float = 0.7,
        depth: int = 10,
        prior: float = 1.0,
    ) -> None:
        from .bots import make_bot
        from .errors import BadConfig

        if iterations < 1 and ms <= 0:
            raise BadConfig("ismcts needs iterations >= 1 or ms > 0")
        if ms < 0 or depth < 0 or c < 0 or prior < 0:
            raise BadConfig("ismcts parameters ms, depth, c and prior must not be negative")
        if rollout == "ismcts" or rollout.startswith("ismcts:"):
            raise BadConfig("ismcts cannot roll out with itself")
        self.spec = spec
        self.iterations = iterations
        self.ms = ms
        self.c = c
        self.depth = depth if spec.evaluate is not None else 0
        self.rng = random.Random(seed)
        self.random_rollout = rollout == "random"
        self.rollout_bot = make_bot(spec, rollout, seed ^ 0x5EED)
        self.prior = prior
        # The guide is the game's own heuristic; a game without one gets no prior (a random
        # guide would only add noise to the search).
        has_guide = prior > 0 and "heuristic" in spec.bots
        self.guide = make_bot(spec, "heuristic", seed ^ 0x6D1DE) if has_guide else None
        self.last_iterations = 0
        # Asked between iterations, on the same clock as the GIL offers below: True means
        # nobody waits for this answer any more (the gRPC caller's deadline passed or it
        # hung up, the engine is stopping, a game's own deadline passed), and the search
        # ends with SearchStopped instead of spending the rest of its budget.
        self.stop: Callable[[], bool] | None = None

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        root = _Node()
        base = canonical(state, seat)
        determiniser = _SearchRng(self.rng.getrandbits(64))
        deadline = time.perf_counter() + self.ms / 1000 if self.ms > 0 else None
        done = 0
        clock = time.perf_counter
        offer_at = clock() + _YIELD_EVERY
        stop = self.stop
        while True:
            if deadline is None:
                if done >= self.iterations:
                    break
            elif clock() >= deadline and done > 0:
                break
            self._iterate(base, seat, root, determiniser)
            done += 1
            # Compiled (Cython) code never passes the interpreter's thread-switch points, so
            # a long search would hold the GIL from the engine server's other threads (a
            # move at the next table): offer it once per _YIELD_EVERY of search.
            now = clock()
            if now >= offer_at:
                if stop is not None and stop():
                    self.last_iterations = done
                    raise SearchStopped(f"search stopped after {done} iterations")
                _yield_gil(0)
                offer_at = now + _YIELD_EVERY
        self.last_iterations = done
        children = root.children

        def rank(a: int) -> tuple[int, float]:
            child = children.get(a)
            return (child.visits, child.reward) if child is not None else (-1, 0.0)

        return max(legal, key=rank)

    def _iterate(self, root_state: State, observer: int, root: _Node, determiniser: _SearchRng) -> None:
        state = root_state.clone()
        state.resample_hidden(observer, determiniser)  # type: ignore[arg-type]
        state.rng = determiniser  # future shuffles are unknown too
        node = root
        path: list[tuple[_Node, int]] = []
        rng = self.rng
        c = self.c
        log = math.log
        sqrt = math.sqrt
        guide = self.guide
        prior = self.prior
        # Selection and expansion. A forced move (one legal action) is played through
        # without a node: it carries no choice, and skipping it keeps the tree's depth for
        # real decisions.
        while not state.is_terminal():
            actor = state.to_act()[0]
            actions = state.legal_actions(actor)
            if len(actions) == 1:
                state._apply(actor, actions[0])
                state.decisions += 1
                continue
            children = node.children
            if guide is not None and node.hint < 0:
                node.hint = guide.choose(state, actor, actions)
            hint = node.hint
            untried = []
            for a in actions:
                child = children.get(a)
                if child is None:
                    untried.append(a)
                else:
                    child.avail += 1
            if untried:
                if hint in untried:
                    action = hint  # the guide's move is tried first
                else:
                    action = untried[int(rng.random() * len(untried))]
                child = children[action] = _Node()
            else:
                best = -1.0
                action = actions[0]
                for a in actions:
                    ch = children[a]
                    score = ch.reward / ch.visits + c * sqrt(log(ch.avail) / ch.visits)
                    if a == hint:
                        score += prior / (ch.visits + 1)  # progressive bias toward the guide
                    if score > best:
                        best, action = score, a
                child = children[action]
            state._apply(actor, action)
            state.decisions += 1
            path.append((child, actor))
            node = child
            if untried:
                break
        # Rollout.
        limit = self.depth
        steps = 0
        if self.random_rollout:
            while not state.is_terminal():
                if limit and steps >= limit:
                    break
                actor = state.to_act()[0]
                actions = state.legal_actions(actor)
                state._apply(actor, actions[int(rng.random() * len(actions))])
                state.decisions += 1
                steps += 1
        else:
            choose = self.rollout_bot.choose
            while not state.is_terminal():
                if limit and steps >= limit:
                    break
                actor = state.to_act()[0]
                actions = state.legal_actions(actor)
                action = actions[0] if len(actions) == 1 else choose(state, actor, actions)
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


def canonical(state: State, observer: int, probes: int = 6) -> State:
    """A copy of `state` that depends only on what `observer` may see.

    `resample_hidden` re-deals most hidden cards from a sorted pool, which already forgets
    where they lay; but a zone whose contents are known and only the order is hidden (a
    chaos deck, a deck just searched) is shuffled from its current order, so a search that
    started from the true state would still be steered by the true order. This finds the
    lists that re-dealing changes (a few probes), sorts each one, and keeps a sort only if
    the observer's view and the position's invariants are unchanged: sorting then only
    forgets an order nobody at the seat could see.
    """
    base = state.clone()
    view = base.view(observer)
    changed: set[tuple[Any, ...]] = set()
    dealt = []
    for salt in range(probes):
        probe = base.clone()
        probe.resample_hidden(observer, Rng(0xC0FFEE + salt))
        dealt.append(probe)
        for name in base.FIELDS:
            _diff(getattr(base, name), getattr(probe, name), (name,), changed)
    for path in sorted(changed, key=repr):
        target = _lookup(base, path)
        if not isinstance(target, list) or any(type(v) is not int for v in target):
            continue
        before = target[:]
        # A card no re-deal moves is one the seat knows the place of (the top cards it put
        # back on a deck, issue 16): it keeps its place; only the others are sorted.
        others = [_lookup(probe, path) for probe in dealt]
        free = [i for i, c in enumerate(before) if any(o[i] != c for o in others)]
        for i, c in zip(free, sorted(before[i] for i in free), strict=True):
            target[i] = c
        if target == before:
            continue
        try:
            base.check_invariants()
            ok = base.view(observer) == view
        except Exception:
            ok = False
        if not ok:
            target[:] = before
    return base


def _diff(a: Any, b: Any, path: tuple[Any, ...], out: set[tuple[Any, ...]]) -> None:
    """Record the paths of int lists that differ between two JSON-shaped values."""
    if a == b:
        return
    if type(a) is list and type(b) is list and len(a) == len(b):
        if a and all(type(v) is int for v in a):
            out.add(path)
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, (*path, i), out)
    elif type(a) is dict and type(b) is dict:
        for key in a:
            if key in b:
                _diff(a[key], b[key], (*path, key), out)


def _lookup(state: State, path: tuple[Any, ...]) -> Any:
    value: Any = getattr(state, path[0])
    for step in path[1:]:
        value = value[step]
    return value
