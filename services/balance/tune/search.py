"""The noise-aware search: Optuna proposes configs, successive halving spends the games.

A config's figures are estimates from games, so a search that trusts one small sample
chases noise, and one that plays every config at full size wastes the budget on the
hopeless. The scheme here (batched successive halving, Jamieson & Talwalkar 2016, the
bracket of Hyperband):

1. Optuna (TPE for one objective, NSGA-II for several, or random) proposes a batch of
   configs through its ask/tell interface, seeded by the spec's seed.
2. Every config of the batch gets `racing.games` games (rung 0). The best 1/eta of them,
   by their worst objective's loss, get their games raised to `games x eta` (rung 1), the
   best 1/eta of those to `games x eta^2`, and so on for `racing.rungs` rungs.
3. Each config's final estimate (from all its games) is told to Optuna, and the next batch
   is proposed from everything learned so far.
4. When the search space runs out before the budget (a few whole-number fields), the
   rest goes to a final race among the finalists (`final_race`).

Seeds are shared: game i of every config is played with seed `seed + i` (a config raised to
rung k plays the seed block its rung adds), so configs are compared on the same deals, and
a config proposed again is not played again: its evaluation is cached by config. The best
config is the lowest worst-objective loss among the configs evaluated with the most games;
for several objectives the Pareto front is taken over those same configs. Everything is
deterministic: the same spec and seed give the same trials.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from services.balance.sweeps.aggregate import aggregate_partials
from services.balance.sweeps.partial import CellPartial, fold
from services.engines.core.errors import BadConfig

from . import guards as guards_mod
from . import objectives as obj_mod
from .evaluate import Runner
from .spec import TuneSpec

CellKey = tuple[int, tuple[str, ...]]  # (players, line-up): one table a config is played at


def config_key(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, default=str)


@dataclass
class Evaluation:
    """Everything known of one config: merged partials per table, and what they measure."""

    config: dict[str, Any]
    partials: dict[CellKey, CellPartial] = field(default_factory=dict)
    games: int = 0  # games per table so far: seeds seed + 0 .. seed + games - 1
    cells: list[dict[str, Any]] = field(default_factory=list)  # aggregates per table
    losses: list[float] = field(default_factory=list)  # per objective, worst table
    measures: list[dict[str, Any]] = field(default_factory=list)
    guards: list[dict[str, Any]] = field(default_factory=list)  # guards.check, every table

    @property
    def broken(self) -> bool:
        """Does an estimate break a guard rail at some table (guards.py)? Never chosen then."""
        return bool(guards_mod.broken(self.guards))

    @property
    def on_target(self) -> bool:
        """Every objective's estimate inside its target and every guard kept."""
        return bool(self.losses) and max(self.losses) <= 1.0 and not self.broken

    @property
    def score(self) -> float:
        """The racing score: the worst objective's loss (at most 1: every estimate on
        target), plus the guards' penalty when it breaks one (1 and more per guard)."""
        return max(self.losses) + guards_mod.penalty(self.guards) if self.losses else math.inf

    @property
    def told(self) -> list[float]:
        """What Optuna is told: each objective's loss plus the guards' penalty."""
        extra = guards_mod.penalty(self.guards)
        return [x + extra for x in self.losses]


@dataclass
class Trial:
    number: int
    config: dict[str, Any]
    state: str  # "complete" or "invalid"
    games: int = 0
    losses: list[float] = field(default_factory=list)
    measures: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    spent_before: int = 0  # search games spent when this trial was told (the progress plot)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "config": self.config,
            "state": self.state,
            "games": self.games,
            "losses": [round(x, 6) for x in self.losses],
            "objectives": self.measures,
            "spent": self.spent_before,
        }
        if self.error:
            out["error"] = self.error
        return out


class Search:
    """One tune's search state: the Optuna study, the evaluation cache and the games spent."""

    def __init__(
        self,
        spec: TuneSpec,
        runner: Runner,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.spec = spec
        self.runner = runner
        self.on_progress = on_progress
        self.cache: dict[str, Evaluation] = {}
        self.trials: list[Trial] = []
        self.spent = 0
        self.tables = len(spec.table.cells())  # tables per config (players x line-ups)
        # The rules as printed (the spec's fixed config alone), played at the first rung on
        # the search's seeds: the length guard's reference, and the early stop's question.
        self.printed = Evaluation({})
        self.stopped_early = False

    # --- playing --------------------------------------------------------------------------
    def cost(self, evs: list[Evaluation], upto: int) -> int:
        return sum(max(0, upto - ev.games) for ev in evs) * self.tables

    def extend(self, evs: list[Evaluation], upto: int) -> None:
        """Raise every evaluation in `evs` to `upto` games per table, one sweep per seed block."""
        by_start: dict[int, list[Evaluation]] = {}
        for ev in evs:
            if ev.games < upto:
                by_start.setdefault(ev.games, []).append(ev)
        for start, group in sorted(by_start.items()):
            sweep = self.spec.sweep(
                [ev.config for ev in group],
                start,
                upto - start,
                name=f"{self.spec.name}: tune, games {start}-{upto - 1}",
            )
            spent_before = self.spent

            def progress(done: int, _total: int, base: int = spent_before) -> None:
                self._report(spent=base + done, phase="playing")

            results = self.runner(sweep, progress)
            partials = fold(sweep, results)
            for cell in sweep.cells():
                ev = group[cell.index // self.tables]
                key = (cell.players, cell.lineup)
                ev.partials.setdefault(key, CellPartial(cell.players)).merge(partials[cell.index])
            self.spent = spent_before + sweep.total_games
            for ev in group:
                ev.games = upto
                self._measure(ev)

    def _measure(self, ev: Evaluation) -> None:
        view = self.spec.sweep([ev.config], 0, ev.games)
        by_cell = {cell.index: ev.partials[(cell.players, cell.lineup)] for cell in view.cells()}
        ev.cells = aggregate_partials(view, by_cell)["cells"]
        ev.losses, ev.measures = [], []
        for obj in self.spec.objectives:
            worst_loss, worst = -1.0, None
            for cell in ev.cells:
                m = obj_mod.measure(obj, cell)
                value = obj_mod.loss(obj, m)
                if value > worst_loss:
                    worst_loss, worst = value, {"label": obj.label, "table": cell["label"], **m.to_dict()}
            ev.losses.append(worst_loss)
            ev.measures.append(worst or {})
        ev.guards = guards_mod.check(self.spec.guards, ev.cells, self.printed.cells or ev.cells)

    def _report(self, **extra: Any) -> None:
        if self.on_progress:
            best = self.best()
            self.on_progress(
                {
                    "spent": self.spent,
                    "budget": self.spec.budget,
                    "trials": len(self.trials),
                    "best": best.config if best else None,
                    "best_score": round(best.score, 4) if best else None,
                    **extra,
                }
            )

    # --- proposing ------------------------------------------------------------------------
    def _study(self):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        seed = self.spec.seed
        n = len(self.spec.objectives)
        if self.spec.sampler == "random":
            sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(seed=seed)
        elif self.spec.sampler == "nsga2":
            sampler = optuna.samplers.NSGAIISampler(
                seed=seed, population_size=max(4, self.spec.racing["batch"])
            )
        else:
            sampler = optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=max(4, self.spec.racing["batch"]), multivariate=True
            )
        return optuna.create_study(directions=["minimize"] * n, sampler=sampler)

    def _distributions(self) -> dict[str, Any]:
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

        out: dict[str, Any] = {}
        for p in self.spec.params:
            low, high = cast(float, p.low), cast(float, p.high)  # None only for a choice
            if p.kind == "int":
                out[p.name] = IntDistribution(int(low), int(high), step=p.step)
            elif p.kind == "float":
                out[p.name] = FloatDistribution(float(low), float(high))
            else:
                out[p.name] = CategoricalDistribution(list(p.choices))
        return out

    def _invalid(self, config: dict[str, Any]) -> str:
        """Why this config cannot be played at one of the tables, or '' if it can."""
        table = self.spec.table
        try:
            cfg = table.game_spec.make_config({**table.config, **config})
            for players in table.players:
                table.game_spec.new_state(cfg, players, table.seed)
        except BadConfig as exc:
            return str(exc)
        return ""

    def run(self, allow_early_stop: bool = True) -> None:
        """Propose, race and tell until the budget, the trial cap or the search space runs out;
        first, unless told not to, stop if the printed rules are on target at the first rung."""
        import optuna

        study = self._study()
        dists = self._distributions()
        rungs = [
            self.spec.racing["games"] * self.spec.racing["eta"] ** k for k in range(self.spec.racing["rungs"])
        ]
        eta = self.spec.racing["eta"]
        if not self.printed.games and self.cost([self.printed], rungs[0]) <= self.spec.budget:
            self.extend([self.printed], rungs[0])
            if allow_early_stop and self.printed.on_target:
                # The printed rules already meet every target and guard at the first rung:
                # nothing to search for; the confirmation says whether it holds on fresh games.
                self.stopped_early = True
                self._report(phase="batch")
                return
        idle = 0  # batches in a row that played nothing new: the space is exhausted
        while len(self.trials) < self.spec.trials and idle < 3:
            batch: list[tuple[Any, Trial, Evaluation | None]] = []
            size = min(self.spec.racing["batch"], self.spec.trials - len(self.trials))
            planned: list[Evaluation] = []
            planned_keys: set[str] = set()
            for _ in range(size):
                trial = study.ask(dists)
                config = {p.name: trial.params[p.name] for p in self.spec.params}
                record = Trial(trial.number, config, "complete")
                reason = self._invalid(config)
                if reason:
                    record.state, record.error = "invalid", reason
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    self.trials.append(record)
                    continue
                key = config_key(config)
                looked = self.cache.setdefault(key, Evaluation(config))
                fresh = key not in planned_keys
                if fresh and self.cost([*planned, looked], rungs[0]) + self.spent > self.spec.budget:
                    # The budget cannot give this one its first look: the search is done.
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    record.state, record.error = "unplayed", "budget spent"
                    batch.append((trial, record, None))
                    break
                if fresh:
                    planned.append(looked)
                    planned_keys.add(key)
                batch.append((trial, record, looked))
            if not planned:
                self.trials.extend(r for _t, r, _e in batch)
                break
            spent_at_start = self.spent
            survivors = planned
            for k, upto in enumerate(rungs):
                if k > 0:
                    ranked = sorted(survivors, key=lambda e: (e.score, config_key(e.config)))
                    survivors = ranked[: max(1, math.ceil(len(survivors) / eta))]
                if self.cost(survivors, upto) + self.spent > self.spec.budget:
                    break  # not enough budget to raise them: tell what we have
                self.extend(survivors, upto)
            for trial, record, ev in batch:
                if ev is None:
                    self.trials.append(record)
                    continue
                record.games = ev.games
                record.losses = list(ev.losses)
                record.measures = list(ev.measures)
                record.spent_before = self.spent
                if ev.games:
                    study.tell(trial, ev.told if len(ev.told) > 1 else ev.told[0])
                else:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    record.state, record.error = "unplayed", "budget spent"
                self.trials.append(record)
            self._report(phase="batch")
            idle = idle + 1 if self.spent == spent_at_start else 0
            if any(r.state == "unplayed" for _t, r, _e in batch):
                break
        self.final_race()

    def final_race(self) -> None:
        """Spend what the search left (its space ran out before its budget) on the finalists.

        The best 1/eta of the configs with the most games get eta times more, again and
        again while the budget allows and more than one contender is left: the winner is
        then told apart from its rivals by more games, not by the luck of the search's seeds.
        """
        eta = self.spec.racing["eta"]
        while True:
            finalists = sorted(self.finalists(), key=lambda e: (e.score, config_key(e.config)))
            if len(finalists) < 2:
                return
            contenders = finalists[: max(2, math.ceil(len(finalists) / eta))]
            upto = contenders[0].games * eta
            if self.cost(contenders, upto) + self.spent > self.spec.budget:
                return
            self.extend(contenders, upto)
            self._report(phase="batch")

    # --- answers --------------------------------------------------------------------------
    def finalists(self) -> list[Evaluation]:
        """The configs evaluated with the most games (the ones whose estimates can be trusted
        most) among those that keep every guard: a config breaking one is never chosen."""
        played = [ev for ev in self.cache.values() if ev.games and not ev.broken]
        if not played:
            return []
        most = max(ev.games for ev in played)
        return [ev for ev in played if ev.games == most]

    def best(self) -> Evaluation | None:
        if self.stopped_early:
            return self.printed
        finalists = self.finalists()
        return min(finalists, key=lambda e: (e.score, config_key(e.config))) if finalists else None

    def pareto(self, limit: int = 5) -> list[Evaluation]:
        """Non-dominated finalists by their objective losses (several objectives), best first."""
        finalists = self.finalists()
        front = [
            a
            for a in finalists
            if not any(
                all(x <= y for x, y in zip(b.losses, a.losses, strict=True)) and b.losses != a.losses
                for b in finalists
            )
        ]
        return sorted(front, key=lambda e: (e.score, config_key(e.config)))[:limit]
