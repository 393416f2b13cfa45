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
-- The caller then files the table under its new deadline in its index shard (store.py).
-- KEYS: table, log, actions, updates channel
-- ARGV: 1 expected version, 2 expected seats_v ('' none), 3 terminal, 4 action
--       (packing.pack_action), 5 update message, 6 finished ttl, 7 n events, events...,
--       field, value, ...
-- Returns {outcome, version, first}: outcome 1 committed, 0 stale, -1 no table, -2 not
-- being played, -3 a seat changed since the gateway read it (nothing written; compute
-- the deadlines again); `first` the log position (event id) of its first event (-1: none).
local f = redis.call('HMGET', KEYS[1], 'version', 'status', 'seats_v', 'acts')
if not f[1] then return {-1, 0, -1} end
if f[2] ~= 'playing' then return {-2, tonumber(f[1]), -1} end
if f[1] ~= ARGV[1] then return {0, tonumber(f[1]), -1} end
if (f[3] or '') ~= ARGV[2] then return {-3, tonumber(f[1]), -1} end
local n = tonumber(ARGV[7])
local acts = f[4]
if acts then
  redis.call('HSET', KEYS[1], 'acts', acts .. ARGV[4], unpack(ARGV, 8 + n))
else
  redis.call('HSET', KEYS[1], unpack(ARGV, 8 + n))
end
local first = -1  -- RPUSH answers the log's new length: the first event's id is that less n
if n > 0 then first = redis.call('RPUSH', KEYS[2], unpack(ARGV, 8, 7 + n)) - n end
local kept = 2
if not acts then
  local seat, action = string.match(ARGV[4], '^(%d+):(%d+),$')
  redis.call('RPUSH', KEYS[3], '[' .. seat .. ',' .. action .. ']')
  kept = 3
end
if ARGV[3] == '1' then
  for i = 1, kept do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[6])) end
end
redis.call('SPUBLISH', KEYS[4], ARGV[5])
return {1, tonumber(f[1]) + 1, first}
