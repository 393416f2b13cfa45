-- KEYS: table, deadlines
-- ARGV: id, seat, now, bot_s, away_s
-- Runs after schedule.lua (prepended by the loader, store.py).
if redis.call('HDEL', KEYS[1], 'away:' .. ARGV[2]) == 1 then
  schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[2]))
end
return 1
