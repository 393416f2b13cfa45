-- Give up a seat: before the start it is free again; during play its bot takes over for
-- good and the seat is marked `left`.
-- KEYS: table, log, updates channel
-- ARGV: 1 seat, 2 token hash, 3 now, 4 bot_s, 5 away_s, 6 log entry, 7 players
-- Returns {outcome, due}: 1 freed before the start, 2 left during play, -1 no table,
-- -4 the token no longer holds the seat.
local players = tonumber(ARGV[7])
local seat = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], unpack(seat_fields({'status', 'to_act', 'decision_seconds', 'token:' .. seat}, players)))
if not f[1] then return {-1, ''} end
if f[4] ~= ARGV[2] then return {-4, ''} end
redis.call('HDEL', KEYS[1], 'token:' .. seat)
redis.call('RPUSH', KEYS[2], ARGV[6])
redis.call('SPUBLISH', KEYS[3], '{"seats":true}')
if f[1] == 'waiting' then
  redis.call('HDEL', KEYS[1], 'player:' .. seat, 'pid:' .. seat)
  return {1, ''}
end
f[4 + 3 * seat + 1] = 'bot'
local out = {'kind:' .. seat, 'bot', 'left:' .. seat, '1'}
local acting = {}
if f[1] == 'playing' then acting = cjson.decode(f[2]) end
local due = schedule(f, 4, players, acting, tonumber(f[3]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), seat, out)
out[#out + 1] = 'due'
out[#out + 1] = due
redis.call('HSET', KEYS[1], unpack(out))
-- A seat changed outside a move: a commit computed from the seats as they were retries.
redis.call('HINCRBY', KEYS[1], 'seats_v', 1)
return {2, due}
