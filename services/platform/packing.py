"""How a live table's bulky values are packed in Redis, so a live table costs a few KB.

A live table's Redis bytes were mostly its event log (one JSON line per event, ~150
bytes each, ~150 lines a game), then its engine state (JSON plus its MAC, ~1.7 KB) and its
action list. Packed here, and unpacked by every reader (store.py, archive.py), so callers
see the same JSON and bytes as before:

- the state: zlib. Engine state is JSON, so an unpacked value starts with `{`; a packed
  one with zlib's 0x78 header, never `{`. A state written before packing (or by hand for a
  support case) is read as it is.
- a log line: `\\x01` + raw deflate against a fixed dictionary of what log lines repeat
  (their keys, `seat `, the cards' JSON shape). A line on its own is too short for plain
  zlib to gain much; with the dictionary it shrinks to about a third. The dictionary is
  part of the format: lines packed with it must always unpack, so it is never edited; a
  different one would take a new leading byte. A line starting with `{` is unpacked JSON.
- the actions: one text field of the table's hash, `seat:action,` per move (a few bytes
  each instead of a list entry of JSON), appended by the commit script in the same HSET
  that writes the move, so recording the action costs no command of its own.

And the Redis the platform starts (services/runtime/embedded_redis.py, docker-compose.yml)
keeps hashes of values up to 4 KB as listpacks (`hash-max-listpack-value 4096`): with the
default 64 bytes the packed state alone made every table's hash a hashtable, about twice
its listpack's bytes. A table whose state or moves outgrow that becomes a hashtable, which
only costs bytes.
"""

from __future__ import annotations

import zlib

STATE_LEVEL = 6
LOG_MARK = b"\x01"
# What log lines share, most common last (deflate finds the nearest match cheapest).
LOG_DICTIONARY = (
    b'"kind":"timeout","seat":"payload":{"bot":"heuristic","action":"label":"'
    b'"kind":"joined","seat":"text":"a player took seat "payload":{"player":"player_id":"'
    b'"kind":"left","seat":"text":"seat left the table"'
    b'"kind":"created","seat":-1,"text":"payload":{"game":"crazy_cultists","players":'
    b'"kind":"draw","kind":"discard","kind":"score","kind":"trick","kind":"turn",'
    b'"target":"suit":"trigger":"positions":[]'
    b'"kind":"counter","seat":"text":"seat plays Counter-Spell (1 in the chain)",'
    b'"payload":{"card":{"id":"counter_spell","name":"Counter-Spell"},"count":'
    b'"kind":"candle","seat":"text":"seat lights candle ","payload":{"count":'
    b'"kind":"play","seat":"text":"seat plays on seat ","payload":{"card":{"id":"'
    b'"},"target":0},"version":"},"target":1},"version":"},"target":2},"version":'
    b'"},"target":3},"version":'
    b'"text":"seat 0 plays "text":"seat 1 plays "text":"seat 2 plays "text":"seat 3 plays '
    b'{"kind":"play","seat":0,"text":"seat 0 stacks Favor '
    b'{"kind":"play","seat":1,"text":"seat 1 stacks Favor '
    b'{"kind":"play","seat":2,"text":"seat 2 stacks Favor '
    b'{"kind":"play","seat":3,"text":"seat 3 stacks Favor '
    b'","payload":{"card":{"id":"favor_","name":"Favor "}},"version":'
    b',"at":17'
)


def pack_state(state: bytes) -> bytes:
    return zlib.compress(state, STATE_LEVEL)


def unpack_state(raw: bytes) -> bytes:
    """The engine's state bytes from what Redis holds (packed or not)."""
    return raw if raw[:1] == b"{" else zlib.decompress(raw)


def pack_log_line(line: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, LOG_DICTIONARY)
    return LOG_MARK + packer.compress(line) + packer.flush()


def unpack_log_line(raw: bytes) -> bytes:
    """A log line's JSON from what Redis holds (packed or not)."""
    if raw[:1] != LOG_MARK:
        return raw
    unpacker = zlib.decompressobj(-15, LOG_DICTIONARY)
    return unpacker.decompress(raw[1:]) + unpacker.flush()


def pack_action(seat: int, action: int) -> bytes:
    return f"{seat}:{action},".encode()


def unpack_actions(raw: bytes) -> list[list[int]]:
    """The moves field as the replay record lists them: [[seat, action], ...]."""
    out = []
    for move in raw.decode().split(","):
        if move:
            seat, _, action = move.partition(":")
            out.append([int(seat), int(action)])
    return out
