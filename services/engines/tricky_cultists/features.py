"""Tricky Cultists's features for the `policy` bot: a seat's information as active indices.

The generic observation (services/engines/observation.py) hashes `state.view(seat)` with the
trick as a bag of cards, so it cannot say which suit was led, who played which card of the
trick, or whether the partner is winning it: the facts every trick-play decision of this
game turns on. Its seats are numbered from seat 0, so "my partner" is a different feature
at every seat. A net over it imitated the heuristic's play on only about 73% of decisions
and won about 13% of games against it.

These features are built for the seat to move, seats counted from it (0 = itself, 1 = the
left opponent, 2 = the partner, 3 = the right opponent): the trick card by card and by who
played it, the led suit, the seat now winning the trick, the seat's own hand and Codex, the
played cards, trump and bonus suit, the phase, the agendas the table can see, tricks won,
hand sizes, Suspicion, the known voids and the team score difference; and Purple's target,
an action naming a seat, is scored by its seat counted from the mover too
(`relative_action`): by absolute seat, the first net chose it no better than at random. Every feature is
0 or 1, so the encoder returns only the indices that are 1 and the net's first layer is a
sum of that many rows (services/engines/core/policy.py) instead of a product over the whole
vector: that, not the matrix product, was most of a decision's CPU.

Only what `state.view(seat)` shows is read (the seat's own hand, Codex and agenda, the pack
while it drafts, and public facts): tests/envs/test_policy_features.py resamples every hidden
card and agenda and checks the features do not change. The layout is fixed for every config
(cards up to the rules' 100, suits up to the four names), so one weights file fits any deck.
"""

from __future__ import annotations

from .cards import AGENDAS, SUIT_NAMES
from .config import MAX_CARDS, PLAYERS
from .rules import BLUE, CHOOSE_BONUS, DRAFT, GIVE, GREEN, OVER, PLAYING, PURPLE, RED, STEALING, STRIDE

_PHASES = (DRAFT, CHOOSE_BONUS, PLAYING, STEALING, RED, GREEN, BLUE, PURPLE, OVER)
_A = len(AGENDAS)
_S = len(SUIT_NAMES)
_HAND_BINS = 16  # hand or Codex sizes 0..15 (the book deals 10 and 3)
_TRICK_BINS = 14  # tricks won 0..13
_SUSPICION_BINS = 8
_ABILITY_BINS = 8
_SCORE_EDGES = (-40, -25, -15, -8, -3, 0, 3, 8, 15, 25, 40)  # team score difference buckets

# Offsets of each block of the layout.
HAND = 0
CODEX = HAND + MAX_CARDS
PLAYED = CODEX + MAX_CARDS
TRICK_BY_SEAT = PLAYED + MAX_CARDS  # PLAYERS x cards: the card each seat has put in this trick
TRICK_TOP = TRICK_BY_SEAT + PLAYERS * MAX_CARDS  # the card now winning the trick
LED = TRICK_TOP + MAX_CARDS  # the led suit, or "no card led yet"
WINNING = LED + _S + 1  # the seat now winning the trick (none: empty trick)
TRICK_LEN = WINNING + PLAYERS + 1
TRUMP = TRICK_LEN + PLAYERS + 1  # suit or none
BONUS = TRUMP + _S + 1
PHASE = BONUS + _S + 1
ME = PHASE + len(_PHASES)  # the seat's own number (GIVE actions name seats by number)
LEADER = ME + PLAYERS
MY_AGENDA = LEADER + PLAYERS  # kind, or none (undrafted or declined)
AGENDA_SEEN = MY_AGENDA + _A + 1  # other seats' agendas once revealed: seat x (kind | none)
PACK = AGENDA_SEEN + PLAYERS * (_A + 1)  # the pack's kinds while this seat drafts
DECLINED = PACK + _A
TRICKS_WON = DECLINED + PLAYERS
HAND_SIZE = TRICKS_WON + PLAYERS * _TRICK_BINS
CODEX_SIZE = HAND_SIZE + PLAYERS * _HAND_BINS
SUSPICION = CODEX_SIZE + PLAYERS * _HAND_BINS
ABILITIES = SUSPICION + PLAYERS * _SUSPICION_BINS
VOID = ABILITIES + PLAYERS * _ABILITY_BINS  # seat x suit: the seat showed it holds none
ROUND = VOID + PLAYERS * _S
LAST_ROUND = ROUND + 8
FINAL_TRICK = LAST_ROUND + 1
STEALER = FINAL_TRICK + 1
SCORE = STEALER + PLAYERS
SIZE = SCORE + len(_SCORE_EDGES) + 1


def _bin(value: int, bins: int) -> int:
    return value if value < bins else bins - 1


def features(state: object, seat: int) -> list[int]:
    """The indices (< SIZE) of the features that are 1 for `seat`, in no particular order."""
    if state is None:  # compiled, `st` is the state's extension type, which admits None
        raise TypeError("features() needs a Tricky Cultists state, not None")
    st = state  # a TrickyCultistsState (features.pxd: compiled, its fields read directly)
    cfg = st.config  # type: ignore[attr-defined]
    n = st.num_players  # type: ignore[attr-defined]
    ranks = cfg.ranks
    out = [HAND + c for c in st.hands[seat]]  # type: ignore[attr-defined]
    out += [CODEX + c for c in st.codex[seat]]  # type: ignore[attr-defined]
    won = st.won  # type: ignore[attr-defined]
    for pile in won:
        out += [PLAYED + c for c in pile]
    trick = st.trick  # type: ignore[attr-defined]
    leader = st.leader  # type: ignore[attr-defined]
    trump = st.trump  # type: ignore[attr-defined]
    if trick:
        led = trick[0] // ranks
        top, top_at = trick[0], 0
        for i, card in enumerate(trick):
            rel = (leader + i - seat) % n
            out.append(TRICK_BY_SEAT + rel * MAX_CARDS + card)
            suit = card // ranks
            if i and ((suit == top // ranks and card > top) or (suit == trump and top // ranks != trump)):
                top, top_at = card, i
        out.append(TRICK_TOP + top)
        out.append(LED + led)
        out.append(WINNING + (leader + top_at - seat) % n)
    else:
        out.append(LED + _S)
        out.append(WINNING + PLAYERS)
    out.append(TRICK_LEN + len(trick))
    out.append(TRUMP + (trump if trump >= 0 else _S))
    bonus = st.bonus  # type: ignore[attr-defined]
    out.append(BONUS + (bonus if bonus >= 0 else _S))
    phase = st.phase  # type: ignore[attr-defined]
    out.append(PHASE + _PHASES.index(phase))
    out.append(ME + seat)
    out.append(LEADER + (leader - seat) % n)
    agendas = st.agendas  # type: ignore[attr-defined]
    mine = agendas[seat]
    out.append(MY_AGENDA + (mine % _A if mine >= 0 else _A))
    revealed = phase != DRAFT
    suspicion = st.suspicion  # type: ignore[attr-defined]
    abilities = st.abilities  # type: ignore[attr-defined]
    hands = st.hands  # type: ignore[attr-defined]
    codex = st.codex  # type: ignore[attr-defined]
    limits = st.suit_limits  # type: ignore[attr-defined]
    for s in range(n):
        rel = (s - seat) % n
        if revealed and rel:
            a = agendas[s]
            out.append(AGENDA_SEEN + rel * (_A + 1) + (a % _A if a >= 0 else _A))
            if a < 0:
                out.append(DECLINED + rel)
        out.append(TRICKS_WON + rel * _TRICK_BINS + _bin(len(won[s]) // n, _TRICK_BINS))
        out.append(HAND_SIZE + rel * _HAND_BINS + _bin(len(hands[s]), _HAND_BINS))
        out.append(CODEX_SIZE + rel * _HAND_BINS + _bin(len(codex[s]), _HAND_BINS))
        out.append(SUSPICION + rel * _SUSPICION_BINS + _bin(suspicion[s], _SUSPICION_BINS))
        out.append(ABILITIES + rel * _ABILITY_BINS + _bin(abilities[s], _ABILITY_BINS))
        for mask, bound in limits[s]:
            if bound == 0:
                for u in range(_S):
                    if mask >> u & 1:
                        out.append(VOID + rel * _S + u)
    if phase == DRAFT and st.actor == seat:  # type: ignore[attr-defined]
        out += [PACK + a % _A for a in set(st.pack)]  # type: ignore[attr-defined]
    rnd = st.round  # type: ignore[attr-defined]
    out.append(ROUND + _bin(rnd, 8))
    if rnd + 1 == cfg.rounds:
        out.append(LAST_ROUND)
    if st.final_trick:  # type: ignore[attr-defined]
        out.append(FINAL_TRICK)
    for s in st.stealers:  # type: ignore[attr-defined]
        out.append(STEALER + (s - seat) % n)
    diff = 0
    for entry in st.breakdown:  # type: ignore[attr-defined]
        for s in range(n):
            part = sum(entry[s])
            diff += part if s % 2 == seat % 2 else -part
    b = 0
    while b < len(_SCORE_EDGES) and diff > _SCORE_EDGES[b]:
        b += 1
    out.append(SCORE + b)
    return out


def relative_action(state: object, seat: int, action: int) -> int:
    """The action as the net scores it: Purple's Suspicion (GIVE + target seat) names its
    target counted from `seat` (0 itself, 2 its partner), as the features count seats, so
    "give it to the left opponent" is one output at every seat; other actions unchanged.
    Within the action table: GIVE + 0..3 either way."""
    kind, arg = divmod(action, STRIDE)
    if kind == GIVE:
        return GIVE * STRIDE + (arg - seat) % state.num_players  # type: ignore[attr-defined]
    return action


def legal_columns(
    state: object, seat: int, legal: list[int], column: dict[int, int]
) -> tuple[list[int], list[int]]:
    """The legal actions the net has a column for, and those columns (`column`: the net's
    action id -> its column), each action scored as `relative_action` names it: the
    policy bot's per-decision mapping in one call, compiled, rather than one Python call
    per legal action."""
    n = state.num_players  # type: ignore[attr-defined]
    known: list[int] = []
    cols: list[int] = []
    for a in legal:
        kind = a // STRIDE
        c = column.get(GIVE * STRIDE + (a % STRIDE - seat) % n if kind == GIVE else a)
        if c is not None:
            known.append(a)
            cols.append(c)
    return known, cols
