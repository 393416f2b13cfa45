-- A move: compare-and-set on the version, then the new state, its log lines, its action and
-- the seats' deadlines, all in the table's own slot. Five commands with this EVALSHA itself
-- (four when the move writes no log line): HMGET, HSET, RPUSH (log), SPUBLISH. The action
-- is appended to the record's `acts` field in the same HSET (read by the same HMGET), and
-- every seat's `tries:i` starts again at 0 there too (move_limits.py): neither costs a
-- command. A table from before `acts` (no such field) still gets its `:actions` list.
-- The caller then files the table under the returned deadline in its index shard (store.py).
-- KEYS: table, log, actions, updates channel
-- ARGV: 1 expected version, 2 now, 3 bot_s, 4 away_s, 5 actor, 6 mark_away, 7 state,
--       8 to_act json, 9 terminal, 10 action (packing.pack_action), 11 update message,
--       12 finished ttl, 13 players, 14 n events, events..., field, value, ...
-- Returns {outcome, version, due, rated, first}: outcome 1 committed, 0 stale, -1 no table,
-- -2 not being played; `first` the log position (event id) of its first event (-1: none).
local players = tonumber(ARGV[13])
local names = seat_fields({'version', 'status', 'decision_seconds', 'rated'}, players)
names[#names + 1] = 'acts'
local f = redis.call('HMGET', KEYS[1], unpack(names))
local acts = f[#names]
if not f[1] then return {-1, 0, '', 0, -1} end
if f[2] ~= 'playing' then return {-2, tonumber(f[1]), '', 0, -1} end
if f[1] ~= ARGV[1] then return {0, tonumber(f[1]), '', 0, -1} end
local new_version = tonumber(f[1]) + 1
local actor = tonumber(ARGV[5])
local away = ''
if ARGV[6] == '1' then away = '1' end
-- The actor's own away flag as this move leaves it, for its deadline below.
f[4 + 3 * actor + 2] = away
local out = {'version', new_version, 'state', ARGV[7], 'to_act', ARGV[8], 'away:' .. actor, away}
if acts then
  out[#out + 1] = 'acts'
  out[#out + 1] = acts .. ARGV[10]
end
-- A new decision for every seat: their tries start again (move_limits.py), made here
-- rather than passed in (each argument is a Lua string to make: they are most of the
-- script's own time).
out[#out + 1] = 'moved_at'
out[#out + 1] = ARGV[2]
for s = 0, players - 1 do
  out[#out + 1] = 'tries:' .. s
  out[#out + 1] = 0
end
local n = tonumber(ARGV[14])
for i = 15 + n, #ARGV, 2 do
  out[#out + 1] = ARGV[i]
  out[#out + 1] = ARGV[i + 1]
end
local due = ''
if ARGV[9] == '1' then
  out[#out + 1] = 'status'
  out[#out + 1] = 'finished'
  out[#out + 1] = 'finished_at'
  out[#out + 1] = ARGV[2]
  schedule(f, 4, players, {}, 0, 0, 0, 0, -1, out)
else
  due = schedule(f, 4, players, cjson.decode(ARGV[8]), tonumber(f[3]), tonumber(ARGV[2]),
    tonumber(ARGV[3]), tonumber(ARGV[4]), actor, out)
end
out[#out + 1] = 'due'
out[#out + 1] = due
redis.call('HSET', KEYS[1], unpack(out))
local first = -1  -- RPUSH answers the log's new length: the first event's id is that less n
if n > 0 then first = redis.call('RPUSH', KEYS[2], unpack(ARGV, 15, 14 + n)) - n end
local kept = 2
if not acts then
  local seat, action = string.match(ARGV[10], '^(%d+):(%d+),$')
  redis.call('RPUSH', KEYS[3], '[' .. seat .. ',' .. action .. ']')
  kept = 3
end
if ARGV[9] == '1' then
  for i = 1, kept do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[12])) end
end
redis.call('SPUBLISH', KEYS[4], ARGV[11])
return {1, new_version, due, tonumber(f[4]) or 0, first}
