"""The generator a live table deals from: ChaCha20, keyed per table (docs/fairness.md).

SplitMix64 (rng.py) has a 64-bit state and an invertible output function, so a player who
sees enough of a deal could in principle solve for the state and know every card to come.
A live table's deal comes instead from the ChaCha20 keystream under a 256-bit key that the
platform derives from its deal secret and the table (services/platform/deal.py): without
the key, the cards still to come are as hard to predict as ChaCha20 is to break, and with
it (revealed in the finished table's record) the game replays exactly (rulings G-2).

Same interface as `Rng` (`next_u64`, `below`, `choice`, `shuffle`, `fork`, `copy`, and
`state`), so the rules never know which one they draw from. The state is the key and the
count of 64-bit words drawn: word i is bytes 8i..8i+7 of the keystream, so a restored
generator goes on exactly where it stopped without keeping a buffer in the game state.
Not compiled: live tables make a few draws per move, where sweeps make millions and keep
SplitMix64.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableSequence, Sequence
from typing import TypeVar

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from .rng import coupled_order, keyed_order

T = TypeVar("T")

KIND = "chacha20"  # the state's `generator` field for this generator
KEY_BYTES = 32
_WORDS_PER_BLOCK = 8  # a ChaCha20 block is 64 bytes
_BLOCK_COUNTER = 1 << 32  # RFC 7539: a 32-bit block counter, then a 96-bit nonce
_MASK = (1 << 64) - 1


def _keystream(key: bytes, first_block: int, blocks: int) -> bytes:
    """`blocks` blocks of keystream from block `first_block` on. The block number's low 32
    bits are the counter and its high bits the nonce, so the stream runs 2**128 blocks
    without repeating."""
    out = []
    while blocks > 0:
        counter = first_block % _BLOCK_COUNTER
        run = min(blocks, _BLOCK_COUNTER - counter)  # the counter must not wrap in one call
        nonce = counter.to_bytes(4, "little") + (first_block // _BLOCK_COUNTER).to_bytes(12, "little")
        encryptor = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor()
        out.append(encryptor.update(bytes(64 * run)))
        first_block += run
        blocks -= run
    return b"".join(out)


class DealRng:
    """ChaCha20 as a counter-mode generator: `key` (32 bytes) and `state`, the words drawn."""

    __slots__ = ("key", "state")
    kind = KIND

    def __init__(self, key: bytes) -> None:
        if type(key) is not bytes or len(key) != KEY_BYTES:
            raise ValueError(f"a deal key is {KEY_BYTES} bytes")
        self.key = key
        self.state = 0

    @classmethod
    def from_state(cls, key: bytes, state: int) -> DealRng:
        rng = cls(key)
        if not 0 <= state <= _MASK:
            raise ValueError("a deal generator's position is a 64-bit count")
        rng.state = state
        return rng

    def copy(self) -> DealRng:
        return DealRng.from_state(self.key, self.state)

    def _words(self, count: int) -> list[int]:
        """The next `count` 64-bit words of the stream, and move past them."""
        start = self.state
        first, skip = divmod(start, _WORDS_PER_BLOCK)
        blocks = -(-(skip + count) // _WORDS_PER_BLOCK)
        stream = _keystream(self.key, first, blocks)
        self.state = (start + count) & _MASK
        return [int.from_bytes(stream[8 * i : 8 * i + 8], "little") for i in range(skip, skip + count)]

    def next_u64(self) -> int:
        return self._words(1)[0]

    def below(self, n: int) -> int:
        """A number in [0, n): Lemire's multiply-shift, as `Rng.below` (bias < n / 2**64)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        return (self.next_u64() * n) >> 64

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place, `below(i + 1)` for each i from the top down, with all the
        words one shuffle needs drawn from the cipher in one call."""
        size = len(items)
        if size < 2:
            return
        words = self._words(size - 1)
        for w, i in zip(words, range(size - 1, 0, -1), strict=True):
            j = (w * (i + 1)) >> 64
            items[i], items[j] = items[j], items[i]

    def keyed_shuffle(self, items: list[int], tags: tuple[int, ...]) -> None:
        """`Rng.keyed_shuffle`: one word of the stream is the salt of every card's key."""
        keyed_order(items, tags, self.next_u64())

    def coupled_shuffle(self, items: list[int], kinds: Sequence[int], reference: Mapping[int, int]) -> None:
        """`Rng.coupled_shuffle`: one word of the stream is the salt."""
        coupled_order(items, kinds, reference, self.next_u64())

    def fork(self, salt: int) -> DealRng:
        """An independent generator that does not disturb this one: a key hashed from this
        key, its position and the salt."""
        seed = self.key + self.state.to_bytes(8, "little") + (salt & _MASK).to_bytes(8, "little")
        return DealRng(hashlib.sha256(b"fork" + seed).digest())
