-- A seat that timed out is back: its decisions get the full time again.
-- KEYS: table    ARGV: 1 seat, 2 now, 3 bot_s, 4 away_s, 5 players
-- Returns the earliest deadline, or false when the seat was not away (nothing changed).
local players = tonumber(ARGV[5])
local seat = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], unpack(seat_fields({'status', 'to_act', 'decision_seconds'}, players)))
if f[3 + 3 * seat + 2] ~= '1' then return false end
f[3 + 3 * seat + 2] = ''
local out = {'away:' .. seat, ''}
local acting = {}
if f[1] == 'playing' then acting = cjson.decode(f[2]) end
local due = schedule(f, 3, players, acting, tonumber(f[3]), tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]), seat, out)
out[#out + 1] = 'due'
out[#out + 1] = due
redis.call('HSET', KEYS[1], unpack(out))
-- A seat changed outside a move: a commit computed from the seats as they were retries.
redis.call('HINCRBY', KEYS[1], 'seats_v', 1)
return due
