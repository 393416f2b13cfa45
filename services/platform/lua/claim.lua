-- KEYS: table, deadlines, open, live, log
-- ARGV: id, seat, token hash, player, now, bot_s, away_s, log entry, player id ('' none)
-- Runs after schedule.lua (prepended by the loader, store.py).
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'waiting' then return -2 end
local seat = ARGV[2]
if redis.call('HGET', KEYS[1], 'kind:' .. seat) ~= 'human' then return -3 end
if redis.call('HEXISTS', KEYS[1], 'token:' .. seat) == 1 then return -4 end
local n = tonumber(redis.call('HGET', KEYS[1], 'players'))
if ARGV[9] ~= '' and redis.call('HGET', KEYS[1], 'rated') == '1' then
  for s = 0, n - 1 do
    if redis.call('HGET', KEYS[1], 'pid:' .. s) == ARGV[9] then return -5 end
  end
end
redis.call('HSET', KEYS[1], 'token:' .. seat, ARGV[3], 'player:' .. seat, ARGV[4])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'pid:' .. seat, ARGV[9]) end
redis.call('RPUSH', KEYS[5], ARGV[8])
local started = 1
for s = 0, tonumber(redis.call('HGET', KEYS[1], 'players')) - 1 do
  if redis.call('HGET', KEYS[1], 'kind:' .. s) == 'human' and redis.call('HEXISTS', KEYS[1], 'token:' .. s) == 0 then
    started = 0
  end
end
if started == 1 then
  redis.call('HSET', KEYS[1], 'status', 'playing')
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[5])
  redis.call('SREM', KEYS[3], ARGV[1])
  redis.call('SADD', KEYS[4], ARGV[1])
  schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), -1)
end
redis.call('PUBLISH', KEYS[1] .. ':updates', '{"seats":true}')
return 1 + started
