-- KEYS: table, deadlines    ARGV: id, now, bot_s, away_s
-- Runs after schedule.lua (prepended by the loader, store.py).
schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), -1)
return 1
