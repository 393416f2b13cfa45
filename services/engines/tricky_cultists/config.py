"""Tricky Cultists' config: every number of the book and the TK rulings is a field.

A balance sweep changes any of them through `--set`; `validate()` refuses a config that
cannot be dealt or whose actions would not decode (rules.py packs a Blue swap as
`hand_card * cards + codex_card`, so the deck is capped at 100 cards) or whose state
would outgrow the 4 KB budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from ..core.errors import BadConfig
from .cards import AGENDA_KEYS, AGENDAS, SUIT_NAMES

PLAYERS = 4  # two partnerships (TK-2)
# Caps that keep a serialised state inside its 4 KB budget (and Blue swaps decodable).
MAX_CARDS = 100
MAX_ROUNDS = 16
MAX_AGENDA_COPIES = 4


@dataclass(frozen=True)
class TrickyCultistsConfig:
    # TK-1: the Cult deck and the point value of a card, (value_base - rank) // value_divisor.
    suits: tuple[str, ...] = SUIT_NAMES
    ranks: int = 13
    value_base: int = 14
    value_divisor: int = 2
    # TK-2: rounds; the book's deal of hand and Codex.
    rounds: int = 4
    hand_size: int = 10
    codex_size: int = 3
    # TK-4: the draft. Declining an agenda costs this much Suspicion.
    draft_size: int = 5
    agenda_copies: int = 1
    decline_suspicion: int = 1
    # TK-3: success / failure VP of each agenda, and its numbers.
    lead_first_success: int = 1
    lead_first_failure: int = 0
    lead_first_suspicion: int = 1
    bonus_suit_success: int = 1
    bonus_suit_failure: int = -1
    most_tricks_success: int = 3
    most_tricks_failure: int = -2
    no_tricks_success: int = 2
    no_tricks_failure: int = -2
    last_trick_success: int = 2
    last_trick_failure: int = -1
    exactly_three_success: int = 3
    exactly_three_failure: int = -1
    exactly_three_target: int = 3
    most_abilities_success: int = 2
    most_abilities_failure: int = -1
    clean_hands_success: int = 2
    clean_hands_failure: int = -1
    # TK-6: points per trick of the Round Bonus suit.
    bonus_per_trick: int = 1
    # TK-7 Purple: Suspicion given; the book: VP lost per Suspicion at scoring step 5.
    purple_suspicion: int = 1
    suspicion_penalty: int = 1
    # G-5: tricks begun before the game ends as a draw.
    max_turns: int = 500

    # The least value each field takes where its rules need more than 0 (validate below).
    LEAST: ClassVar[dict[str, int]] = {
        **dict.fromkeys(("ranks", "value_divisor", "hand_size", "rounds", "agenda_copies", "max_turns"), 1),
        "draft_size": PLAYERS,
    }
    # Caps of the rules that are tighter than the usual room around a default.
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {
        "rounds": (1, MAX_ROUNDS),
        "agenda_copies": (1, MAX_AGENDA_COPIES),
    }

    def validate(self) -> None:
        unknown = [s for s in self.suits if s not in SUIT_NAMES]
        if unknown or not self.suits or len(set(self.suits)) != len(self.suits):
            raise BadConfig(
                f"suits must be distinct names among {', '.join(SUIT_NAMES)} (TK-7), got {list(self.suits)}"
            )
        if self.ranks < 1 or self.cards > MAX_CARDS:
            raise BadConfig(
                f"ranks x suits must be 1..{MAX_CARDS} cards, got {self.ranks} x {len(self.suits)}"
            )
        if self.value_divisor < 1:
            raise BadConfig(f"value_divisor must be at least 1, got {self.value_divisor}")
        if self.hand_size < 1 or self.codex_size < 0:
            raise BadConfig("hand_size must be at least 1 and codex_size at least 0")
        if PLAYERS * (self.hand_size + self.codex_size) > self.cards:
            raise BadConfig(
                f"{PLAYERS} x (hand_size + codex_size) = {PLAYERS * (self.hand_size + self.codex_size)} "
                f"cards do not fit a {self.cards}-card deck"
            )
        if self.max_turns < 1:
            raise BadConfig(f"max_turns must be at least 1, got {self.max_turns}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise BadConfig(f"rounds must be 1..{MAX_ROUNDS}, got {self.rounds}")
        if not 1 <= self.agenda_copies <= MAX_AGENDA_COPIES:
            raise BadConfig(f"agenda_copies must be 1..{MAX_AGENDA_COPIES}, got {self.agenda_copies}")
        # Every seat must be offered at least one agenda, even if all before it kept one.
        if not PLAYERS <= self.draft_size <= self.agenda_cards:
            raise BadConfig(f"draft_size must be {PLAYERS}..{self.agenda_cards}, got {self.draft_size}")
        for name in ("decline_suspicion", "lead_first_suspicion", "purple_suspicion", "exactly_three_target"):
            if getattr(self, name) < 0:
                raise BadConfig(f"{name} must not be negative, got {getattr(self, name)}")

    @cached_property
    def cards(self) -> int:
        return self.ranks * len(self.suits)

    @cached_property
    def agenda_cards(self) -> int:
        return len(AGENDAS) * self.agenda_copies

    @cached_property
    def agenda_points(self) -> tuple[tuple[int, int], ...]:
        """Agenda kind -> (success VP, failure VP), the TK-3 table."""
        return tuple(
            (getattr(self, f"{key}_success"), getattr(self, f"{key}_failure")) for key in AGENDA_KEYS
        )

    @cached_property
    def card_values(self) -> tuple[int, ...]:
        """Card id -> point value (TK-1): low cards are worth more."""
        return tuple(
            (self.value_base - (c % self.ranks + 1)) // self.value_divisor for c in range(self.cards)
        )

    @cached_property
    def card_suits(self) -> tuple[int, ...]:
        """Card id -> suit index (TK-1)."""
        return tuple(c // self.ranks for c in range(self.cards))

    @cached_property
    def card_names(self) -> tuple[str, ...]:
        return tuple(f"{self.suits[c // self.ranks]} {c % self.ranks + 1}" for c in range(self.cards))
