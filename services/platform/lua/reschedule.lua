-- Every seat deadline of a table recomputed from its record, as if each seat's decision
-- had just changed.
-- KEYS: table    ARGV: 1 now, 2 bot_s, 3 away_s, 4 players
-- Returns the earliest deadline ('' none), or false when there is no table.
local players = tonumber(ARGV[4])
local f = redis.call('HMGET', KEYS[1], unpack(seat_fields({'status', 'to_act', 'decision_seconds'}, players)))
if not f[1] then return false end
local out = {}
local acting = {}
if f[1] == 'playing' then acting = cjson.decode(f[2]) end
local due = schedule(f, 3, players, acting, tonumber(f[3]), tonumber(ARGV[1]), tonumber(ARGV[2]),
  tonumber(ARGV[3]), -1, out)
out[#out + 1] = 'due'
out[#out + 1] = due
redis.call('HSET', KEYS[1], unpack(out))
-- A seat changed outside a move: a commit computed from the seats as they were retries.
redis.call('HINCRBY', KEYS[1], 'seats_v', 1)
return due
