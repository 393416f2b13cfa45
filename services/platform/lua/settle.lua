-- One finished table's rating update, in the game's ratings slot: applied once (the table is
-- then in the settled set) and only if nobody changed these players' ratings since they
-- were read (compare-and-set), so two settlers never lose each other's update.
-- KEYS: ratings hash, settled zset
-- ARGV: 1 table id, 2 now, 3 keep settled marks this long, then player, before ('' none),
--       after, ...
-- Returns 1 applied, 0 already settled, -1 a rating changed meanwhile (read and try again).
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local writes = {}
for i = 4, #ARGV, 3 do
  local now = redis.call('HGET', KEYS[1], ARGV[i]) or ''
  if now ~= ARGV[i + 1] then return -1 end
  writes[#writes + 1] = ARGV[i]
  writes[#writes + 1] = ARGV[i + 2]
end
if #writes > 0 then redis.call('HSET', KEYS[1], unpack(writes)) end
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
return 1
