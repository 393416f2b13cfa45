"""Where a live table's deal key comes from (docs/fairness.md).

A table whose deal nobody may predict is dealt from ChaCha20 under a 256-bit key
(services/engines/core/deal_rng.py): an HMAC-SHA256 of the table's id and seed under the
server's deal secret. The key is kept in the table's record beside its state, never shown
while the table lives, and published in the replay record once it is finished, so the game
replays exactly (rulings G-2) while the public seed alone never told anyone the cards.

The secret is CULTISTS_DEAL_SECRET; `cultists run` makes one in its data folder and passes
it to every process it starts. A process given none makes its own random one: its tables
deal and replay as well (their keys are stored), only nobody can derive a key again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

DEAL_SECRET_ENV = "CULTISTS_DEAL_SECRET"
DEAL_KEY_BYTES = 32
SECRET_FILE = "deal-secret"


def secret_from_env() -> bytes:
    """CULTISTS_DEAL_SECRET's bytes, or a fresh random secret for this process."""
    given = os.environ.get(DEAL_SECRET_ENV, "")
    return given.encode() if given else secrets.token_bytes(32)


def deal_key(secret: bytes, table_id: str, seed: int) -> bytes:
    """The table's ChaCha20 key: distinct per table even where two share a seed, and
    unknowable without the secret."""
    message = f"cultists-deal\0{table_id}\0{seed}".encode()
    return hmac.digest(secret, message, hashlib.sha256)


def kept_secret(folder: Path) -> str:
    """The data folder's deal secret, made (readable by its owner only) on first use: what
    `cultists run` hands its processes, so every table of that platform is keyed alike."""
    path = folder / SECRET_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    secret = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made meanwhile by another process: that one is the secret
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return secret
