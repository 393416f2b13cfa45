-- KEYS: table, deadlines, log
-- ARGV: id, seat, token hash, now, bot_s, away_s, log entry
-- Runs after schedule.lua (prepended by the loader, store.py).
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local seat = ARGV[2]
if redis.call('HGET', KEYS[1], 'token:' .. seat) ~= ARGV[3] then return -4 end
local status = redis.call('HGET', KEYS[1], 'status')
redis.call('HDEL', KEYS[1], 'token:' .. seat)
redis.call('RPUSH', KEYS[3], ARGV[7])
redis.call('PUBLISH', KEYS[1] .. ':updates', '{"seats":true}')
if status == 'waiting' then
  redis.call('HDEL', KEYS[1], 'player:' .. seat, 'pid:' .. seat)
  return 1
end
redis.call('HSET', KEYS[1], 'kind:' .. seat, 'bot', 'left:' .. seat, '1')
schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(seat))
return 2
