"""The sources bench (bench/coupling_sources.py) measures what it says: its stock mode plays
the sweeps' own keyed games move for move, so its share is the coupled bench's, and each
re-coupled mode really changes which draws the paired games share."""

from __future__ import annotations

from bench import coupling_sources as sources
from services.engines.core.play import play_to_end
from services.engines.trash_cult import GAME as TRASH
from services.engines.trash_cult.cards import RAT


def test_the_stock_mode_plays_the_sweeps_keyed_games_move_for_move() -> None:
    for seed in range(sources.SEED, sources.SEED + 4):
        for config in (None, {"donuts": 9}):
            rat_sat, rat_won, actions = sources._play(config, seed, "stream", "stream")
            state, record = play_to_end(
                TRASH, TRASH.make_config(config), 2, seed, ["heuristic"] * 2, shuffle="keyed"
            )
            cults = list(state.cult)  # type: ignore[attr-defined]
            assert actions == [a for _seat, a in record.actions]
            assert rat_sat == (RAT in cults)
            assert rat_won == any(cults[s] == RAT for s in record.winners)


def test_a_re_coupled_draw_is_fixed_by_what_and_when_not_by_what_came_before() -> None:
    """`turn`: a draw one game makes (a steal) leaves the next refill's salt alone, where the
    stock stream's would move; `count`: the k-th refill gets one salt whatever the turn."""
    state = TRASH.new_state(None, 2, 5, None, "keyed")
    pile = list(range(20))
    tags = tuple(range(1000, 1020))

    def refill(draws: sources._KeyedDraws, steal: bool) -> list[int]:
        if steal:
            draws.below(5)
        deck = list(pile)
        draws.keyed_shuffle(deck, tags)
        return deck

    for by_turn in (True, False):
        with_steal = refill(sources._KeyedDraws(state, 5, by_turn), steal=True)
        assert with_steal == refill(sources._KeyedDraws(state, 5, by_turn), steal=False)
    first = sources._KeyedDraws(state, 5, by_turn=False)
    early = refill(first, steal=False)
    state.turn += 3  # the same (first) refill three turns later
    assert refill(sources._KeyedDraws(state, 5, by_turn=False), steal=False) == early
    assert refill(sources._KeyedDraws(state, 5, by_turn=True), steal=False) != early
