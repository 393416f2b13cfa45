"""Tricky Cultists: two partnerships, four rounds of tricks, secret agendas, suit abilities.

A round, top to bottom as the book plays it:

1. deal 10 cards to each hand and 3 to each Codex (TK-1);
2. draft agendas: the Start Player gets 5, keeps one or declines for a Suspicion, passes the
   rest left, and so on (TK-4); choices stay secret until every seat has drafted;
3. reveal: Lead First Trick leads and takes a Suspicion, Choose Bonus Suit picks the Round
   Bonus suit (TK-5);
4. tricks: follow suit if able, highest trump else highest led card wins, the winner stacks
   the trick with the winning card on top (TK-6), and the seat with the second-highest
   led-suit card resolves that suit's ability (TK-7); the round ends after the first trick
   that empties a hand (TK-9);
5. score in the book's five steps: agendas (TK-3) and the Win No Tricks steal (TK-8), trick
   values, Round Bonus, Suspicion discard (TK-10), Suspicion penalty.

After the last round the team with the higher total wins; equal totals draw (TK-11).

Actions are `kind * STRIDE + argument` (see the table below), so one integer says what is
done and to what, and decoding is a single divmod.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Hashable, Sequence
from typing import Any

from ..core.decks import check_conservation, fits, redeal, redeal_limited
from ..core.errors import BadState
from ..core.game import FISHER_YATES, State
from ..core.rng import Rng, range_tags
from .cards import (
    AGENDAS,
    BONUS_SUIT,
    EXACTLY_THREE,
    LAST_TRICK,
    LEAD_FIRST,
    MOST_ABILITIES,
    MOST_TRICKS,
    NO_TRICKS,
    agenda_kind,
    agenda_name,
)
from .config import TrickyCultistsConfig

# --- actions: kind * STRIDE + argument -------------------------------------------------
STRIDE = 10_000
PLAY = 0  # + card: play it to the trick
KEEP = 1  # + agenda kind: keep one agenda of that kind from the pack (TK-4)
DECLINE = 2  # decline an agenda and take a Suspicion (TK-4)
BONUS = 3  # + suit: the Round Bonus suit (TK-5)
TRUMP = 4  # + suit: Red ability, set trump (TK-7)
TAKE = 5  # + card: Green ability, take that Codex card into hand (TK-7)
SWAP = 6  # + hand_card * cards + codex_card: Blue ability (TK-7)
GIVE = 7  # + seat: Purple ability, give that seat a Suspicion (TK-7)
STEAL = 8  # + top card of the trick: Win No Tricks steal (TK-8)
PASS = 9  # decline an optional ability or the steal

# --- phases: what the seat named by `actor` must decide ---------------------------------
DRAFT, CHOOSE_BONUS, PLAYING, STEALING, OVER = "draft", "bonus", "play", "steal", "over"
RED, GREEN, BLUE, PURPLE = "red", "green", "blue", "purple"  # the suit abilities (TK-7)
ABILITY_PHASES = {"Red": RED, "Green": GREEN, "Blue": BLUE, "Purple": PURPLE}
PHASES = frozenset({DRAFT, CHOOSE_BONUS, PLAYING, STEALING, OVER, RED, GREEN, BLUE, PURPLE})


UNRECORDED = -2  # agenda_met kind of a round scored before the record existed (older states)


def _unrecorded_rounds(doc: dict[str, Any], players: int) -> list[list[list[Any]]]:
    """An older state's scored rounds, judged "not recorded": which agenda each seat kept in
    a past round is gone from such a state, so nothing is claimed and sweeps skip them."""
    rounds = doc.get("breakdown")
    return [[[UNRECORDED, None] for _ in range(players)] for _ in (rounds if type(rounds) is list else ())]


class TrickyCultistsState(State):
    # Older documents (before issue 16) lack these: no void seen yet, rounds unrecorded.
    ADDED_FIELDS = {
        "suit_limits": lambda doc, players: [[] for _ in range(players)],
        "agenda_met": _unrecorded_rounds,
    }
    KEYED_DEALS = True  # every shuffle goes through shuffle_cards / deal_cards
    FIELDS = (
        "round",
        "start",
        "phase",
        "actor",
        "hands",
        "codex",
        "undealt",
        "trick",
        "leader",
        "won",
        "last_winner",
        "final_trick",
        "trump",
        "bonus",
        "suspicion",
        "abilities",
        "agendas",
        "pack",
        "agenda_out",
        "stealers",
        "suit_limits",
        "breakdown",
        "agenda_met",
        "capped",
    )
    config: TrickyCultistsConfig

    def __init__(
        self,
        config: TrickyCultistsConfig,
        num_players: int,
        seed: int,
        deal_key: bytes | None = None,
        shuffle: int = FISHER_YATES,
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        self.suspicion = [0] * num_players  # carries over between rounds (TK-10)
        self.breakdown: list[list[list[int]]] = []  # per round, per seat: agenda, tricks, bonus, suspicion
        # Per scored round, per seat: [agenda kind or -1, met true / failed false / null].
        self.agenda_met: list[list[list[Any]]] = []
        self.capped = False
        self.stealers: list[int] = []
        self._deal_round(0)

    # --- setup --------------------------------------------------------------------------
    def _deal_round(self, round_index: int) -> None:
        """TK-1, TK-2, TK-4: a fresh deal, Start Player = round index, the draft begins."""
        cfg, n = self.config, self.num_players
        self.round = round_index
        self.start = round_index % n
        deck = [card for card in range(cfg.cards)]  # a C loop when compiled, no range object
        self.shuffle_cards(deck, range_tags(cfg.cards))  # every card its own kind
        h, c = cfg.hand_size, cfg.codex_size
        self.hands = [sorted(deck[i * h : (i + 1) * h]) for i in range(n)]
        at = n * h
        self.codex = [sorted(deck[at + i * c : at + (i + 1) * c]) for i in range(n)]
        self.undealt = deck[at + n * c :]
        self.trick: list[int] = []
        self.leader = self.start
        self.won: list[list[int]] = [[] for _ in range(n)]  # tricks of n cards, winning card first
        self.last_winner = -1
        self.final_trick = False
        self.trump = -1  # no trump at round start (TK-7)
        self.bonus = -1
        self.abilities = [0] * n
        # Per seat, what the table has seen of its hand this round (voids revealed by not
        # following suit, loosened by each Codex card taken in): [suit mask, most cards of
        # those suits the hand can hold]. Public; determinisations keep to it.
        self.suit_limits: list[list[list[int]]] = [[] for _ in range(n)]
        self.agendas = [-1] * n  # agenda card id, -1 none (not drafted yet, or declined)
        agendas = [agenda for agenda in range(cfg.agenda_cards)]
        self.shuffle_cards(agendas, range_tags(cfg.agenda_cards))
        self.pack = agendas[: cfg.draft_size]
        self.agenda_out = agendas[cfg.draft_size :]
        self.phase = DRAFT
        self.actor = self.start

    # --- the decision vocabulary ----------------------------------------------------------
    def to_act(self) -> list[int]:
        phase = self.phase  # a str local when compiled (rules.pxd): a cheaper comparison
        return [] if phase == OVER else [self.actor]

    def is_terminal(self) -> bool:
        phase = self.phase
        return phase == OVER

    def legal_actions(self, seat: int) -> list[int]:
        if seat != self.actor:
            return []
        phase = self.phase
        if phase == PLAYING:
            hand = self.hands[seat]
            trick = self.trick
            if trick:
                ranks = self.config.ranks
                lead = trick[0]
                led = lead // ranks
                follow = [c for c in hand if c // ranks == led]
                if follow:
                    return follow
            return hand[:]
        if phase == DRAFT:
            held = 0  # the kinds of agenda in the pack, as bits
            for a in self.pack:
                held |= 1 << agenda_kind(a)
            base = KEEP * STRIDE
            return [base + k for k in range(len(AGENDAS)) if held >> k & 1] + [DECLINE * STRIDE]
        if phase in (CHOOSE_BONUS, RED):
            base = (BONUS if phase == CHOOSE_BONUS else TRUMP) * STRIDE
            return [base + s for s in range(len(self.config.suits))]
        if phase == PURPLE:
            base = GIVE * STRIDE
            return [base + s for s in range(self.num_players)]
        if phase == GREEN:
            base = TAKE * STRIDE
            return [base + c for c in self.codex[seat]] + [PASS * STRIDE]
        if phase == BLUE:
            cards = self.config.cards
            codex = self.codex[seat]
            base = SWAP * STRIDE
            swaps = [base + h * cards + c for h in self.hands[seat] for c in codex]
            return [*swaps, PASS * STRIDE]
        if phase == STEALING:
            n = self.num_players
            base = STEAL * STRIDE
            tops = [base + top for v in range(n) if v % 2 != seat % 2 for top in self.won[v][::n]]
            return [*tops, PASS * STRIDE]
        return []

    def _apply(self, seat: int, action: int) -> None:
        code, stride = action, STRIDE  # C longs when compiled (rules.pxd): a C divmod
        kind, arg = divmod(code, stride)
        if kind == PLAY:
            self._play(seat, arg)
        elif kind == KEEP:
            self._keep(seat, arg)
        elif kind == DECLINE:
            self.suspicion[seat] += self.config.decline_suspicion
            if self.log is not None:  # events are not even called with the log off
                self.emit("draft", seat, "seat {} declines an agenda and takes a Suspicion", seat)
            self._pass_pack(seat)
        elif kind == BONUS:
            self.bonus = arg
            if self.log is not None:
                self.emit(
                    "bonus", seat, "seat {} chooses {} as the Round Bonus suit", seat, self.config.suits[arg],
                    suit=self.config.suits[arg],
                )  # fmt: skip
            self._begin_trick(self.leader)
        elif kind == TRUMP:
            self.trump = arg
            if self.log is not None:
                self.emit(
                    "ability", seat, "seat {} sets trump to {}", seat, self.config.suits[arg],
                    ability="trump", suit=self.config.suits[arg],
                )  # fmt: skip
            self._after_trick()
        elif kind == TAKE:
            self.codex[seat].remove(arg)
            insort(self.hands[seat], arg)
            self._loosen_limits(seat)
            if self.log is not None:
                self.emit("ability", seat, "seat {} takes a card from their Codex", seat, ability="take")
            self._after_trick()
        elif kind == SWAP:
            hand_card, codex_card = divmod(arg, self.config.cards)
            self.hands[seat].remove(hand_card)
            self.codex[seat].remove(codex_card)
            insort(self.hands[seat], codex_card)
            insort(self.codex[seat], hand_card)
            self._loosen_limits(seat)
            if self.log is not None:
                self.emit("ability", seat, "seat {} swaps a card with their Codex", seat, ability="swap")
            self._after_trick()
        elif kind == GIVE:
            self.suspicion[arg] += self.config.purple_suspicion
            if self.log is not None:
                self.emit(
                    "ability",
                    seat,
                    "seat {} gives seat {} a Suspicion",
                    seat,
                    arg,
                    ability="give",
                    target=arg,
                )
            self._after_trick()
        elif kind == STEAL:
            self._steal(seat, arg)
        elif self.phase == STEALING:  # PASS
            self._next_stealer()
        else:
            self._after_trick()

    # --- draft and reveal ---------------------------------------------------------------
    def _keep(self, seat: int, kind: int) -> None:
        """TK-4: keep one agenda of `kind` from the pack, then pass it on."""
        agenda = self.pack[[agenda_kind(a) for a in self.pack].index(kind)]  # the first of that kind
        self.pack.remove(agenda)
        self.agendas[seat] = agenda
        if self.log is not None:
            self.emit("draft", seat, "seat {} keeps an agenda", seat)
        self._pass_pack(seat)

    def _pass_pack(self, seat: int) -> None:
        """TK-4: pass left; once every seat has drafted, leftovers go out and all reveal."""
        nxt = (seat + 1) % self.num_players
        if nxt != self.start:
            self.actor = nxt
            return
        self.agenda_out.extend(self.pack)
        self.pack = []
        self._reveal()

    def _reveal(self) -> None:
        """The book's step 3, with TK-5 for duplicate agendas (config `agenda_copies`)."""
        n = self.num_players
        order = [(self.start + i) % n for i in range(n)]
        kinds = [agenda_kind(a) if a >= 0 else -1 for a in self.agendas]
        if self.log is not None:
            for s in order:
                held = agenda_name(self.agendas[s]) if kinds[s] >= 0 else "no agenda"
                self.emit("reveal", s, "seat {} reveals {}", s, held, agenda=held)
        leaders = [s for s in order if kinds[s] == LEAD_FIRST]
        for s in leaders:
            self.suspicion[s] += self.config.lead_first_suspicion
        self.leader = leaders[0] if leaders else self.start
        choosers = [s for s in order if kinds[s] == BONUS_SUIT]
        if choosers:
            self.phase = CHOOSE_BONUS
            self.actor = choosers[0]
        else:
            self._begin_trick(self.leader)

    # --- tricks -------------------------------------------------------------------------
    def _begin_trick(self, leader: int) -> None:
        """A new trick is a new turn; G-5's cap ends the game before it begins."""
        if self.turn >= self.config.max_turns:
            self.phase = OVER
            self.actor = -1
            self.capped = True
            self.emit("over", -1, "the turn cap is reached: the game ends in a draw (G-5)")
            return
        self.turn += 1
        self.leader = leader
        self.phase = PLAYING
        self.actor = leader

    def _play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand.remove(card)
        trick = self.trick
        ranks = self.config.ranks
        first = trick[0] if trick else card  # the card that led this trick
        suit, led = card // ranks, first // ranks
        if self.suit_limits[seat] or suit != led:
            self._note_play(seat, suit, led)
        trick.append(card)
        n = self.num_players
        if len(trick) < n:
            self.actor = (seat + 1) % n
        else:
            self._gather()

    # --- what the table learns of a hand (for determinisations) ---------------------------
    def _note_play(self, seat: int, suit: int, led: int) -> None:
        """A played card of `suit` leaves the hand; not following the `led` suit reveals a
        void in it.

        Each limit `[mask, bound]` says the hand holds at most `bound` cards of the suits in
        `mask`. A void in suit L adds `[L, 0]` and, since none of L is left, tightens every
        limit to also cover L at its bound; limits implied by another are dropped.
        """
        suit_bit = 1 << suit
        void = 0 if suit == led else 1 << led
        limits = [[m | void, b - 1 if m & suit_bit else b] for m, b in self.suit_limits[seat]]
        if void:
            limits.append([void, 0])
        self.suit_limits[seat] = _tightest(limits, len(self.hands[seat]))

    def _loosen_limits(self, seat: int) -> None:
        """A hidden Codex card came into the hand: it may be of any suit."""
        limits = self.suit_limits[seat]
        if limits:
            self.suit_limits[seat] = _tightest([[m, b + 1] for m, b in limits], len(self.hands[seat]))

    def _gather(self) -> None:
        """TK-6 and TK-7: who wins the trick, and who triggers the led suit's ability."""
        cfg, n = self.config, self.num_players
        ranks = cfg.ranks
        trick = self.trick
        first = trick[0]
        led, trump = first // ranks, self.trump
        led_cards = sorted([c for c in trick if c // ranks == led])  # the highest last
        trumps = sorted([c for c in trick if c // ranks == trump]) if trump >= 0 else []
        top = trumps[-1] if trumps else led_cards[-1]
        # The book's example: a lone led card triggers its own ability.
        second = led_cards[-2] if len(led_cards) > 1 else led_cards[-1]
        leader, top_at, second_at = self.leader, trick.index(top), trick.index(second)
        winner = (leader + top_at) % n
        trigger = (leader + second_at) % n
        pile = self.won[winner]
        pile.append(top)
        pile.extend([c for c in trick if c != top])
        self.trick = []
        self.last_winner = winner
        self.leader = winner
        self.abilities[trigger] += 1
        self.final_trick = [] in self.hands  # TK-9: the trick emptied a hand
        suit = cfg.suits[led]
        if self.log is not None:
            names = cfg.card_names
            self.emit(
                "trick",
                winner,
                "seat {} wins the trick with {} ({}); seat {} triggers {}",
                winner,
                names[top],
                ", ".join([names[c] for c in trick]),
                trigger,
                suit,
                card=self._event_card(top),
                suit=suit,
                trigger=trigger,
            )
        phase = ABILITY_PHASES[suit]
        if (phase == GREEN and not self.codex[trigger]) or (
            phase == BLUE and not (self.hands[trigger] and self.codex[trigger])
        ):
            self._after_trick()  # triggered, but the optional ability has nothing to act on
            return
        self.phase = phase
        self.actor = trigger

    def _after_trick(self) -> None:
        """The ability is the end of the trick; then the next trick or the scoring (TK-9)."""
        if self.final_trick:
            self._judge_agendas()
        else:
            self._begin_trick(self.leader)

    # --- scoring ------------------------------------------------------------------------
    def _judge_agendas(self) -> None:
        """Scoring step 1 (TK-3); trick counts are taken before any steal (TK-8)."""
        n = self.num_players
        tricks = [len(pile) // n for pile in self.won]
        entry = [[0, 0, 0, 0] for _ in range(n)]
        judged: list[list[Any]] = [[-1, None] for _ in range(n)]
        order = [(self.start + i) % n for i in range(n)]
        stealers = []
        for s in order:
            if self.agendas[s] < 0:
                continue
            kind = agenda_kind(self.agendas[s])
            met = self._agenda_met(kind, s, tricks)
            judged[s] = [kind, met]
            if met is not None:
                entry[s][0] = self.config.agenda_points[kind][0 if met else 1]
            if kind == NO_TRICKS and met:
                stealers.append(s)
        self.breakdown.append(entry)
        self.agenda_met.append(judged)  # what sweeps count as agenda success (rates per agenda)
        self.stealers = stealers
        self._next_stealer(first=True)

    def _agenda_met(self, kind: int, seat: int, tricks: list[int]) -> bool | None:
        """True met, False failed, None when a tie decides it (TK-3)."""
        if kind == LEAD_FIRST:
            return True
        if kind == BONUS_SUIT:
            ranks, bonus = self.config.ranks, self.bonus
            return any([top // ranks == bonus for top in self.won[seat][:: self.num_players]])
        if kind == MOST_TRICKS:
            return _strictly(tricks, seat, max)
        if kind == NO_TRICKS:
            return tricks[seat] == 0
        if kind == LAST_TRICK:
            return self.last_winner == seat
        if kind == EXACTLY_THREE:
            return tricks[seat] == self.config.exactly_three_target
        if kind == MOST_ABILITIES:
            return _strictly(self.abilities, seat, max)
        return _strictly(self.suspicion, seat, min)  # CLEAN_HANDS, at scoring step 1

    def _next_stealer(self, first: bool = False) -> None:
        """TK-8: each successful Win No Tricks seat in turn order steals, if it has a target."""
        if not first:
            self.stealers.pop(0)
        n = self.num_players
        while self.stealers:
            s = self.stealers[0]
            if any([self.won[v] for v in range(n) if v % 2 != s % 2]):
                self.phase = STEALING
                self.actor = s
                return
            self.stealers.pop(0)
        self._score_round()

    def _steal(self, seat: int, top: int) -> None:
        n = self.num_players
        for victim in range(n):
            pile = self.won[victim]
            if victim % 2 != seat % 2 and top in pile:
                at = pile.index(top)
                self.won[seat].extend(pile[at : at + n])
                del pile[at : at + n]
                if self.log is not None:
                    self.emit(
                        "steal",
                        seat,
                        "seat {} steals seat {}'s trick won by {}",
                        seat,
                        victim,
                        self.config.card_names[top],
                        card=self._event_card(top),
                        target=victim,
                    )
                break
        self._next_stealer()

    def _score_round(self) -> None:
        """Scoring steps 2-5, then the next round or the end of the game (TK-2, TK-10)."""
        cfg, n = self.config, self.num_players
        entry = self.breakdown[-1]
        ranks, values, bonus = cfg.ranks, cfg.card_values, self.bonus
        for s in range(n):
            tops = self.won[s][::n]
            entry[s][1] = sum([values[t] for t in tops])
            if bonus >= 0:
                entry[s][2] = cfg.bonus_per_trick * sum([1 for t in tops if t // ranks == bonus])
        most = max(self.suspicion)
        if self.suspicion.count(most) == 1:  # TK-10: only a strict highest holder discards
            holder = self.suspicion.index(most)
            self.suspicion[holder] = 0
            if self.log is not None:
                self.emit("score", holder, "seat {} holds the most Suspicion and discards it all", holder)
        for s in range(n):
            entry[s][3] = -cfg.suspicion_penalty * self.suspicion[s]
        if self.log is not None:
            self.emit(
                "score",
                -1,
                "round {} scores: {}",
                self.round + 1,
                [sum(part) for part in entry],
                round=self.round + 1,
            )
        if self.round + 1 >= cfg.rounds:
            self.phase = OVER
            self.actor = -1
        else:
            self._deal_round(self.round + 1)

    # --- results ------------------------------------------------------------------------
    def totals(self) -> list[int]:
        """Each seat's score so far: the sum of every part of every round's breakdown."""
        return [sum(sum(entry[s]) for entry in self.breakdown) for s in range(self.num_players)]

    def score_breakdown(self) -> list[tuple[float, dict[str, float]]]:
        """Each seat's points over all rounds by the book's scoring steps (agenda, tricks,
        bonus suit, suspicion), and its team's total, which decides (TK-11)."""
        teams = self.team_totals()
        out = []
        for s in range(self.num_players):
            parts = [sum(entry[s][i] for entry in self.breakdown) for i in range(4)]
            named = dict(zip(("agenda", "tricks", "bonus", "suspicion"), map(float, parts), strict=True))
            out.append((float(sum(parts)), {**named, "team_total": float(teams[s % 2])}))
        return out

    def team_totals(self) -> list[int]:
        per_seat = self.totals()
        return [sum(per_seat[s] for s in range(self.num_players) if s % 2 == team) for team in (0, 1)]

    def winners(self) -> list[int]:
        """TK-11: both partners of the higher team total; a tie or the G-5 cap is a draw."""
        if self.phase != OVER or self.capped:
            return []
        team = self.team_totals()
        if team[0] == team[1]:
            return []
        best = 0 if team[0] > team[1] else 1
        return [s for s in range(self.num_players) if s % 2 == best]

    def returns(self) -> list[float]:
        """Partners share the result: 1 each for the winning team, 0.5 each for a draw."""
        if self.phase != OVER:
            return [0.0] * self.num_players
        won = self.winners()
        if not won:
            return [0.5] * self.num_players
        return [1.0 if s in won else 0.0 for s in range(self.num_players)]

    # --- what a seat sees (G-3) ---------------------------------------------------------
    def _event_card(self, card: int) -> dict[str, str]:
        """A card as every game's events name one (`Card`): its number as text, its name."""
        return {"id": str(card), "name": self.config.card_names[card]}

    def _card(self, card: int) -> dict[str, Any]:
        cfg = self.config
        return {
            "id": card,
            "suit": cfg.suits[card // cfg.ranks],
            "rank": card % cfg.ranks + 1,
            "value": cfg.card_values[card],
            "name": cfg.card_names[card],
        }

    def _drafted(self, seat: int) -> bool:
        """Seats draft in order from the Start Player; those before the actor are done."""
        if self.phase != DRAFT:
            return True
        n = self.num_players
        return (seat - self.start) % n < (self.actor - self.start) % n

    def view(self, seat: int | None) -> dict[str, Any]:
        cfg, n = self.config, self.num_players
        viewer = seat if seat is not None and 0 <= seat < n else -1  # -1: a spectator
        revealed = self.phase != DRAFT
        totals = self.totals()
        seats = []
        for s in range(n):
            drafted = self._drafted(s)
            shown = self.agendas[s] >= 0 and (revealed or s == viewer)
            seats.append(
                {
                    "seat": s,
                    "team": s % 2,
                    "hand_size": len(self.hands[s]),
                    "codex_size": len(self.codex[s]),
                    "suspicion": self.suspicion[s],
                    "agenda": agenda_name(self.agendas[s]) if shown else "",
                    "drafted": drafted,
                    "declined": drafted and self.agendas[s] < 0,
                    "tricks": [self._card(t) for t in self.won[s][::n]],
                    "abilities": self.abilities[s],
                    "score": totals[s],
                }
            )
        drafting = self.phase == DRAFT and self.actor == viewer
        return {
            "viewer": viewer,
            "round": self.round + 1,
            "rounds": cfg.rounds,
            "start_player": self.start,
            "phase": self.phase,
            "actor": self.actor,
            "trump": cfg.suits[self.trump] if self.trump >= 0 else "",
            "bonus_suit": cfg.suits[self.bonus] if self.bonus >= 0 else "",
            "leader": self.leader,
            "trick": [self._card(c) for c in self.trick],
            "played": [self._card(c) for c in sorted(c for pile in self.won for c in pile)],
            "hand": [self._card(c) for c in self.hands[viewer]] if viewer >= 0 else [],
            "codex": [self._card(c) for c in self.codex[viewer]] if viewer >= 0 else [],
            "pack": sorted(agenda_name(a) for a in self.pack) if drafting else [],
            "pack_size": len(self.pack),
            "undealt": len(self.undealt),
            "last_winner": self.last_winner,
            "final_trick": self.final_trick,
            "stealers": list(self.stealers),
            "seats": seats,
            "scores": [
                {
                    "round": r + 1,
                    "start_player": r % n,
                    "seats": [
                        {
                            "seat": s,
                            "agenda": part[0],
                            "tricks": part[1],
                            "bonus": part[2],
                            "suspicion": part[3],
                            "total": sum(part),
                            "agenda_kept": AGENDAS[met[0]] if met[0] >= 0 else "",
                            "agenda_result": _RESULT_WORDS[met[1]] if met[0] >= 0 else "",
                        }
                        for s, (part, met) in enumerate(zip(entry, judged, strict=True))
                    ],
                }
                for r, (entry, judged) in enumerate(zip(self.breakdown, self.agenda_met, strict=True))
            ],
            "team_scores": self.team_totals(),
            "capped": self.capped,
        }

    # --- words for actions --------------------------------------------------------------
    def action_label(self, action: int) -> str:
        kind, arg = divmod(action, STRIDE)
        cfg = self.config
        names = cfg.card_names
        if kind == PLAY and arg < cfg.cards:
            return f"play {names[arg]}"
        if kind == KEEP and arg < len(AGENDAS):
            return f"keep {AGENDAS[arg]}"
        if kind == DECLINE and arg == 0:
            return "decline an agenda (take a Suspicion)"
        if kind in (BONUS, TRUMP) and arg < len(cfg.suits):
            return f"{'bonus suit' if kind == BONUS else 'set trump'} {cfg.suits[arg]}"
        if kind == TAKE and arg < cfg.cards:
            return f"take {names[arg]} from the Codex"
        if kind == SWAP and arg < cfg.cards * cfg.cards:
            hand_card, codex_card = divmod(arg, cfg.cards)
            return f"swap {names[hand_card]} for Codex {names[codex_card]}"
        if kind == GIVE and arg < self.num_players:
            return f"give seat {arg} a Suspicion"
        if kind == STEAL and arg < cfg.cards:
            return f"steal the trick won by {names[arg]}"
        if kind == PASS and arg == 0:
            return "pass"
        return f"unknown action {action}"

    def action_detail(self, action: int) -> dict[str, Any]:
        kind, arg = divmod(action, STRIDE)
        cfg = self.config
        if kind == PLAY:
            return {"kind": "play", "card": self._card(arg)}
        if kind == KEEP:
            return {"kind": "keep", "agenda": AGENDAS[arg]}
        if kind == DECLINE:
            return {"kind": "decline"}
        if kind in (BONUS, TRUMP):
            return {"kind": "bonus" if kind == BONUS else "trump", "suit": cfg.suits[arg]}
        if kind == TAKE:
            return {"kind": "take", "card": self._card(arg)}
        if kind == SWAP:
            hand_card, codex_card = divmod(arg, cfg.cards)
            return {"kind": "swap", "card": self._card(hand_card), "codex_card": self._card(codex_card)}
        if kind == GIVE:
            return {"kind": "give", "target": arg}
        if kind == STEAL:
            victim = next((v for v in range(self.num_players) if arg in self.won[v][:: self.num_players]), -1)
            return {"kind": "steal", "card": self._card(arg), "target": victim}
        return {"kind": "pass"}

    def action_text_key(self, action: int) -> Hashable | None:
        """Every action's words come from the config's names alone, except a steal's detail,
        which names the seat that won that trick, and a gift's, which checks the seat is at
        this table."""
        kind = action // STRIDE
        if kind == STEAL:
            return None
        return (action, self.num_players) if kind == GIVE else action

    # --- validation ---------------------------------------------------------------------
    def check_invariants(self) -> None:
        cfg, n = self.config, self.num_players
        if n != 4:
            raise BadState(f"Tricky Cultists is for 4 players, not {n}")
        _int("round", self.round, 0, cfg.rounds)
        if self.start != self.round % n:
            raise BadState(f"start {self.start!r} is not the Start Player of round {self.round} (TK-2)")
        if self.phase not in PHASES:
            raise BadState(f"unknown phase {self.phase!r}")
        over = self.phase == OVER
        _int("actor", self.actor, -1 if over else 0, 0 if over else n)
        if type(self.capped) is not bool or (self.capped and not over):
            raise BadState("capped must be a bool, true only once the game is over")
        if self.turn < 0 or self.turn > cfg.max_turns:
            raise BadState(f"turn {self.turn} is outside 0..max_turns")
        if type(self.final_trick) is not bool:
            raise BadState("final_trick must be a bool")
        for name in ("hands", "codex", "won"):
            _zones(name, getattr(self, name), n)
        _zone("trick", self.trick)
        _zone("undealt", self.undealt)
        check_conservation([*self.hands, *self.codex, *self.won, self.trick, self.undealt], cfg.cards)
        if len(self.undealt) != cfg.cards - n * (cfg.hand_size + cfg.codex_size):
            raise BadState(f"undealt holds {len(self.undealt)} cards; the deal leaves a different number")
        if any(len(c) > cfg.codex_size for c in self.codex):
            raise BadState("a Codex holds more cards than were dealt to it")
        if any(len(pile) % n for pile in self.won):
            raise BadState(f"won piles must hold whole tricks of {n} cards")
        _int("leader", self.leader, 0, n)
        _int("last_winner", self.last_winner, -1, n)
        _int("trump", self.trump, -1, len(cfg.suits))
        _int("bonus", self.bonus, -1, len(cfg.suits))
        _ints("suspicion", self.suspicion, n, 0, 1 << 30)
        _ints("abilities", self.abilities, n, 0, 1 << 30)
        _ints("agendas", self.agendas, n, -1, cfg.agenda_cards)
        _ints("pack", self.pack, None, 0, cfg.agenda_cards)
        _ints("agenda_out", self.agenda_out, None, 0, cfg.agenda_cards)
        held = [a for a in self.agendas if a >= 0]
        check_conservation([held, self.pack, self.agenda_out], cfg.agenda_cards, "agenda card")
        _ints("stealers", self.stealers, None, 0, n)
        self._check_suit_limits()
        self._check_breakdown()
        self._check_phase()
        if not over and not self.legal_actions(self.actor):
            raise BadState(f"seat {self.actor} is asked to decide ({self.phase}) but has no legal action")

    def _check_suit_limits(self) -> None:
        """Limits are well formed, in their tightest form, and true of the hands."""
        n, suits = self.num_players, self.config.card_suits
        if type(self.suit_limits) is not list or len(self.suit_limits) != n:
            raise BadState("suit_limits must hold one list per seat")
        full = (1 << len(self.config.suits)) - 1
        for seat, limits in enumerate(self.suit_limits):
            if type(limits) is not list:
                raise BadState("suit_limits must hold one list of [suit mask, bound] per seat")
            for item in limits:
                _ints("suit_limits entry", item, 2, 0, 1 << 30)
            if any(not 1 <= m <= full for m, _b in limits):
                raise BadState(f"suit_limits masks must name suits among 1..{full}")
            if limits != _tightest(limits, len(self.hands[seat])):
                raise BadState(f"seat {seat}'s suit_limits are not in their tightest form")
            if not fits(self.hands[seat], limits, suits):
                raise BadState(f"seat {seat}'s hand holds a suit it showed it had run out of")

    def _check_breakdown(self) -> None:
        n = self.num_players
        if type(self.breakdown) is not list:
            raise BadState("breakdown must be a list of rounds")
        for entry in self.breakdown:
            if type(entry) is not list or len(entry) != n:
                raise BadState("each breakdown round holds one entry per seat")
            for part in entry:
                _ints("breakdown entry", part, 4, -(1 << 30), 1 << 30)
        scored = self.round + (self.phase == STEALING or (self.phase == OVER and not self.capped))
        if len(self.breakdown) != scored:
            raise BadState(f"breakdown has {len(self.breakdown)} rounds; {scored} have been scored")
        self._check_agenda_met()

    def _check_agenda_met(self) -> None:
        """One judgement per scored round and seat, agreeing with the agenda points scored."""
        n, points = self.num_players, self.config.agenda_points
        if type(self.agenda_met) is not list or len(self.agenda_met) != len(self.breakdown):
            raise BadState("agenda_met must hold one list per scored round")
        for entry, judged in zip(self.breakdown, self.agenda_met, strict=True):
            if type(judged) is not list or len(judged) != n:
                raise BadState("each agenda_met round holds one [kind, met] per seat")
            for part, item in zip(entry, judged, strict=True):
                if type(item) is not list or len(item) != 2 or type(item[1]) not in (bool, type(None)):
                    raise BadState(f"agenda_met entries are [agenda kind, true/false/null], got {item!r}")
                kind, met = item
                _int("agenda_met kind", kind, UNRECORDED, len(AGENDAS))
                if kind < 0 and met is not None:
                    raise BadState(f"agenda_met {item!r}: a seat without an agenda is judged null")
                if kind == UNRECORDED:
                    continue  # a round scored before the record existed: its points stand
                scored = 0 if met is None else points[kind][0 if met else 1]
                if part[0] != scored:
                    raise BadState(f"agenda points {part[0]} disagree with agenda_met {item!r}")

    def _check_phase(self) -> None:
        """The pending decision must be one the rules could have asked for."""
        cfg, n, phase = self.config, self.num_players, self.phase
        if phase != DRAFT and self.pack:
            raise BadState("only the draft has an agenda pack")
        if phase != PLAYING and self.trick:
            raise BadState("cards lie in a trick outside trick play")
        if phase != STEALING and self.stealers:
            raise BadState("stealers wait only during the steal")
        if phase == DRAFT:
            if any(self.agendas[s] >= 0 for s in range(n) if not self._drafted(s)):
                raise BadState("a seat holds an agenda before its turn to draft")
            if len(self.pack) + sum(self._drafted(s) and self.agendas[s] >= 0 for s in range(n)) != (
                cfg.draft_size
            ):
                raise BadState("the pack and the kept agendas do not add up to the cards dealt")
        elif phase == PLAYING:
            if self.actor != (self.leader + len(self.trick)) % n or len(self.trick) >= n:
                raise BadState("the seat to play is not the next one after the trick's leader")
            if any(not self.hands[(self.leader + i) % n] for i in range(len(self.trick), n)):
                raise BadState("a seat still to play this trick has no card")
        elif phase == CHOOSE_BONUS:
            if self.agendas[self.actor] < 0 or agenda_kind(self.agendas[self.actor]) != BONUS_SUIT:
                raise BadState("only a Choose Bonus Suit holder picks the bonus suit")
        elif phase == STEALING:
            s = self.stealers[0] if self.stealers else -1
            if s != self.actor or agenda_kind(self.agendas[s]) != NO_TRICKS or not self.final_trick:
                raise BadState("only a successful Win No Tricks holder steals, after the last trick")
        if phase in (CHOOSE_BONUS, DRAFT) and (self.won != [[]] * n or self.bonus >= 0 or self.trump >= 0):
            raise BadState("tricks, trump or bonus exist before the first trick")

    # --- hidden information (G-3) -------------------------------------------------------
    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Re-deal what `observer` has not seen, consistent with everything it has seen.

        Other hands, other Codexes and the undealt cards are pooled and re-dealt keeping
        each hand's `suit_limits` (the voids the table saw). During the draft a seat that
        has drafted saw the pack it was handed: the agendas kept by the seats after it (up
        to the one drafting now) and the current pack come from those cards; the agendas
        kept before it, and the cards out of the round, from those it never saw.
        """
        n = self.num_players
        others = [s for s in range(n) if s != observer]
        zones = [*(self.hands[s] for s in others), *(self.codex[s] for s in others), self.undealt]
        limits: dict[int, Sequence[Sequence[int]]] = {
            i: self.suit_limits[s] for i, s in enumerate(others) if self.suit_limits[s]
        }
        if limits:
            redeal_limited(zones, limits, self.config.card_suits, rng)
        else:
            redeal(zones, rng)
        for s in others:
            self.hands[s].sort()
            self.codex[s].sort()
        if self.phase == DRAFT:
            self._resample_draft(observer, rng)

    def _resample_draft(self, observer: int, rng: Rng) -> None:
        """TK-4 as `observer` saw it: which hidden agendas it saw in its pack, which not."""
        n, start = self.num_players, self.start
        turn = (self.actor - start) % n  # seats at draft places below this have drafted
        place = (observer - start) % n
        secret = {s: [self.agendas[s]] for s in range(n) if s != observer and self.agendas[s] >= 0}
        if place < turn:  # observer drafted: it saw what the later seats took, and the pack
            unseen = [secret[s] for s in secret if (s - start) % n < place]
            seen = [secret[s] for s in secret if (s - start) % n > place]
            redeal([*unseen, self.agenda_out], rng)
            redeal([*seen, self.pack], rng)
        else:  # drafting now (sees the pack) or still to draft (has seen nothing)
            hidden_pack = self.actor != observer
            redeal([*secret.values(), self.agenda_out, *([self.pack] if hidden_pack else [])], rng)
        for s, kept in secret.items():
            self.agendas[s] = kept[0]


_RESULT_WORDS = {True: "met", False: "failed", None: "tied"}


def _tightest(limits: list[list[int]], hand_size: int) -> list[list[int]]:
    """The same knowledge, shortest: per mask the smallest bound, none a hand always meets
    (bound >= its size), none implied by a limit on more suits with no larger bound;
    sorted by mask."""
    tight = [[m, b] for i, (m, b) in enumerate(limits) if b < hand_size and not _implied(i, limits)]
    tight.sort()
    return tight


def _implied(i: int, limits: list[list[int]]) -> bool:
    """Whether another of `limits` says all that limit `i` does: a smaller bound on the
    same suits (or the same bound, listed earlier), or no larger bound on more suits."""
    m, b = limits[i]
    for j, (o, ob) in enumerate(limits):
        if o == m:
            if ob < b or (ob == b and j < i):
                return True
        elif m & ~o == 0 and ob <= b:
            return True
    return False


def _strictly(values: list[int], seat: int, best: Any) -> bool | None:
    """Is `seat` strictly the most (best=max) / fewest (best=min)? None if tied for it."""
    target = best(values)
    if values[seat] != target:
        return False
    return None if values.count(target) > 1 else True


def _int(name: str, value: Any, lo: int, hi: int) -> None:
    if type(value) is not int or not lo <= value < hi:
        raise BadState(f"{name} must be a whole number in {lo}..{hi - 1}, got {value!r}")


def _ints(name: str, values: Any, length: int | None, lo: int, hi: int) -> None:
    if type(values) is not list or (length is not None and len(values) != length):
        raise BadState(f"{name} must be a list of {length or 'some'} whole numbers, got {values!r}")
    for v in values:
        _int(name, v, lo, hi)


def _zone(name: str, cards: Any) -> None:
    if type(cards) is not list or any(type(c) is not int for c in cards):
        raise BadState(f"{name} must be a list of card ids")


def _zones(name: str, zones: Any, players: int) -> None:
    if type(zones) is not list or len(zones) != players:
        raise BadState(f"{name} must hold one list per seat")
    for zone in zones:
        _zone(name, zone)
