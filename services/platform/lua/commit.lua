-- A move: compare-and-set, then the new state, its log lines and its action, all in the
-- table's own slot. Five commands with this EVALSHA itself (four when the move writes no
-- log line): HMGET, HSET, RPUSH (log), SPUBLISH. The action is appended to the record's
-- `acts` field in the same HSET (read by the same HMGET). Every other field, the seats'
-- deadlines and the earliest `due` among them, comes worked out by the gateway from the
-- table it read (seat_deadlines.py): this script's own Redis CPU is only the check and
-- the writes. The check: the version the move was chosen at, and `seats_v` as the
-- gateway read it (present, leave and reschedule bump it when they change a seat's kind,
-- away flag or deadline), so the deadlines written are those of the seats as they are.
-- A table from before `acts` (no such field) still gets its `:actions` list.
-- The caller then files the table under its new deadline in its index shard (store.py),
-- and seals the log's oldest lines into a chunk once `:log` holds a block of them.
-- KEYS: table, log, actions, updates channel, log chunks
-- ARGV: 1 expected version, 2 expected seats_v ('' none), 3 terminal, 4 action
--       (packing.pack_action), 5 update message, 6 finished ttl, 7 n events, events...,
--       field, value, ...
-- Returns {outcome, version, first, unsealed, blocks}: outcome 1 committed, 0 stale, -1
-- no table, -2 not being played, -3 a seat changed since the gateway read it (nothing
-- written; compute the deadlines again); `first` the log position (event id) of its
-- first event (-1: none); `unsealed` the lines `:log` holds now and `blocks` the record's
-- `logz` (blocks of BLOCK lines sealed in `:logz`, before `:log`'s first line).
local BLOCK = 16  -- packing.LOG_BLOCK
local f = redis.call('HMGET', KEYS[1], 'version', 'status', 'seats_v', 'acts', 'logz')
if not f[1] then return {-1, 0, -1, 0, 0} end
if f[2] ~= 'playing' then return {-2, tonumber(f[1]), -1, 0, 0} end
if f[1] ~= ARGV[1] then return {0, tonumber(f[1]), -1, 0, 0} end
if (f[3] or '') ~= ARGV[2] then return {-3, tonumber(f[1]), -1, 0, 0} end
local n = tonumber(ARGV[7])
local acts = f[4]
local blocks = tonumber(f[5] or '0')
if acts then
  redis.call('HSET', KEYS[1], 'acts', acts .. ARGV[4], unpack(ARGV, 8 + n))
else
  redis.call('HSET', KEYS[1], unpack(ARGV, 8 + n))
end
local first, unsealed = -1, 0  -- RPUSH answers `:log`'s new length
if n > 0 then
  unsealed = redis.call('RPUSH', KEYS[2], unpack(ARGV, 8, 7 + n))
  first = blocks * BLOCK + unsealed - n
end
if not acts then
  local seat, action = string.match(ARGV[4], '^(%d+):(%d+),$')
  redis.call('RPUSH', KEYS[3], '[' .. seat .. ',' .. action .. ']')
end
if ARGV[3] == '1' then
  for _, key in ipairs({KEYS[1], KEYS[2], KEYS[3], KEYS[5]}) do
    redis.call('EXPIRE', key, tonumber(ARGV[6]))
  end
end
redis.call('SPUBLISH', KEYS[4], ARGV[5])
return {1, tonumber(f[1]) + 1, first, unsealed, blocks}
