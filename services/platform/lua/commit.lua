-- KEYS: table, log, actions, deadlines, live, ratings-pending, finished
-- ARGV: id, expected version, now, bot_s, away_s, actor, mark_away, state, to_act, terminal,
--       action json, update message, ttl, n events, events..., field, value, ...
-- Runs after schedule.lua (prepended by the loader, store.py).
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return {-1, 0} end
if redis.call('HGET', KEYS[1], 'status') ~= 'playing' then return {-2, tonumber(version)} end
if version ~= ARGV[2] then return {0, tonumber(version)} end
local new_version = tonumber(version) + 1
redis.call('HSET', KEYS[1], 'version', new_version, 'state', ARGV[8], 'to_act', ARGV[9])
local n = tonumber(ARGV[14])
for i = 1, n do redis.call('RPUSH', KEYS[2], ARGV[14 + i]) end
for i = 15 + n, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('RPUSH', KEYS[3], ARGV[11])
local actor = tonumber(ARGV[6])
if ARGV[7] == '1' then
  redis.call('HSET', KEYS[1], 'away:' .. actor, '1')
else
  redis.call('HDEL', KEYS[1], 'away:' .. actor)
end
if ARGV[10] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished')
  redis.call('SREM', KEYS[5], ARGV[1])
  if redis.call('HGET', KEYS[1], 'rated') == '1' then redis.call('SADD', KEYS[6], ARGV[1]) end
  redis.call('ZADD', KEYS[7], tonumber(ARGV[3]), ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[7], 0, -501)  -- keeps the newest FINISHED_KEEP
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[13])) end
end
schedule(KEYS[1], KEYS[4], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), actor)
redis.call('PUBLISH', KEYS[1] .. ':updates', ARGV[12])
return {1, new_version}
