-- Recomputes the seat deadlines of one table from its hash. Shared by every script that can
-- change who must act or how long they may take, so the rule lives in one place: a seat
-- keeps a deadline it already has (an out-of-turn answer is not given more time because
-- someone else moved), except the seat named by `reset`, whose decision just changed (-1:
-- every seat). Bots get a short safety-net deadline, away seats a short one, humans the
-- table's decision time. The zset holds the earliest, so one range query finds due tables.
local function schedule(tkey, dkey, tid, now, bot_s, away_s, reset)
  local f = redis.call('HMGET', tkey, 'to_act', 'status', 'players', 'decision_seconds')
  local acting = {}
  if f[2] == 'playing' then
    for _, s in ipairs(cjson.decode(f[1])) do acting[s] = true end
  end
  local earliest = nil
  for s = 0, tonumber(f[3]) - 1 do
    local key = 'deadline:' .. s
    if not acting[s] then
      redis.call('HDEL', tkey, key)
    else
      local raw = redis.call('HGET', tkey, key)
      local at = nil
      if raw then at = tonumber(raw) end
      if at == nil or reset == -1 or reset == s then
        local wait = tonumber(f[4])
        if redis.call('HGET', tkey, 'kind:' .. s) == 'bot' then
          wait = bot_s
        elseif redis.call('HEXISTS', tkey, 'away:' .. s) == 1 then
          -- Away shortens the wait; it never lengthens a table's own shorter time.
          wait = math.min(away_s, wait)
        end
        at = now + wait
        redis.call('HSET', tkey, key, string.format('%.3f', at))
      end
      if earliest == nil or at < earliest then earliest = at end
    end
  end
  if earliest == nil then
    redis.call('ZREM', dkey, tid)
  else
    redis.call('ZADD', dkey, string.format('%.3f', earliest), tid)
  end
end
