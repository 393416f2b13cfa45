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
- the actions: one field of the table's hash, appended by the commit script in the same
  HSET that writes the move, so recording the action costs no command of its own. A
  table opened since `ACTS_MARK` has `\\x02` then one varint of `action * 16 + seat` per
  move (two bytes for most moves); one opened before has text, `seat:action,` per move,
  and keeps it (the mark is written once, by the creation).
- a seat's legal actions (`legal:i`, the JSON array `/legal` sends, 8-9 KB for a Tricky
  Cultists seat with many choices): zlib past `LEGAL_PLAIN` bytes (a JSON array starts
  with `[`, zlib with 0x78), kept as JSON below it (`[]`, a handful of actions).
- the log's older lines: every `LOG_BLOCK` lines are sealed into the last chunk of the
  table's `:logz` list (store.py seals them after a move), `\\x02` and raw deflate of
  the lines joined by newlines against the same dictionary; a chunk takes
  `CHUNK_BLOCKS` blocks, packed again with each (then a new chunk begins). Lines packed
  together shrink to about a third of the same lines packed one by one (they repeat each
  other's names, texts and timestamps' leading digits), the more of them the better; the
  newest lines stay one per entry in `:log`, where the scripts push them.

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


def _deflate(data: bytes) -> bytes:
    """Raw deflate against the log's dictionary: a line's and a chunk's one format."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, LOG_DICTIONARY)
    return packer.compress(data) + packer.flush()


def _inflate(data: bytes) -> bytes:
    unpacker = zlib.decompressobj(-15, LOG_DICTIONARY)
    return unpacker.decompress(data) + unpacker.flush()


def pack_log_line(line: bytes) -> bytes:
    return LOG_MARK + _deflate(line)


def unpack_log_line(raw: bytes) -> bytes:
    """A log line's JSON from what Redis holds (packed or not)."""
    return _inflate(raw[1:]) if raw[:1] == LOG_MARK else raw


ACTS_MARK = b"\x02"
# Seats per table are fewer than this (a move's varint holds its seat in 4 bits).
_SEATS = 16


def pack_action(seat: int, action: int, binary: bool = True) -> bytes:
    """One move as the `acts` field appends it: a varint after `ACTS_MARK` (binary), or
    `seat:action,` for a table whose field is text (opened before the mark)."""
    if not binary:
        return f"{seat}:{action},".encode()
    if not 0 <= seat < _SEATS or action < 0:
        raise ValueError(f"no packed form for seat {seat}, action {action}")
    value = action * _SEATS + seat
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def unpack_actions(raw: bytes) -> list[list[int]]:
    """The moves field as the replay record lists them: [[seat, action], ...]."""
    out = []
    if raw[:1] == ACTS_MARK:
        value = shift = 0
        for byte in raw[1:]:
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                out.append([value % _SEATS, value // _SEATS])
                value = shift = 0
        return out
    for move in raw.decode().split(","):
        if move:
            seat, _, action = move.partition(":")
            out.append([int(seat), int(action)])
    return out


# Legal lists this short stay JSON: zlib's own header and checksum would outweigh its gain.
LEGAL_PLAIN = 96


def pack_legal(actions: bytes) -> bytes:
    """A seat's legal actions (JSON) as `legal:i` holds them."""
    return zlib.compress(actions, STATE_LEVEL) if len(actions) > LEGAL_PLAIN else actions


def unpack_legal(raw: bytes) -> bytes:
    """The JSON array from what `legal:i` holds (packed or not; b"": ask View)."""
    return zlib.decompress(raw) if raw[:1] == b"\x78" else raw


# Lines sealed at a time, and blocks per chunk. Positions (event ids) stay those of the
# whole log: chunk k of `:logz` holds lines k*CHUNK_LINES on (CHUNK_LINES, the last one
# fewer), and the record's `logz` field counts the blocks sealed, so `:log`'s first entry
# is line logz*LOG_BLOCK. lua/commit.lua works positions out with the same LOG_BLOCK.
LOG_BLOCK = 16
CHUNK_BLOCKS = 4
CHUNK_LINES = LOG_BLOCK * CHUNK_BLOCKS
CHUNK_MARK = b"\x02"


def pack_log_chunk(lines: list[bytes]) -> bytes:
    """Log lines (JSON, never holding a raw newline: orjson escapes it) as one chunk."""
    return CHUNK_MARK + _deflate(b"\n".join(lines))


def unpack_log_chunk(raw: bytes) -> list[bytes]:
    return _inflate(raw[1:]).split(b"\n")


def unpack_log(chunks: list[bytes], lines: list[bytes]) -> list[bytes]:
    """The JSON lines of sealed `chunks` (`:logz`) then of unsealed `lines` (`:log`), in
    order: how every reader joins the two lists."""
    return [line for chunk in chunks for line in unpack_log_chunk(chunk)] + [
        unpack_log_line(x) for x in lines
    ]
