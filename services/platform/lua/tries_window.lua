-- A seat's try past its limit (move_limits.py), the only path that pays for this script.
-- The seat waits `window` seconds from its first refused try at this decision; a try past
-- the limit after that is counted afresh (tries 1). Atomic, so refused tries arriving at
-- once open one window, and a try whose count was wiped by another's fresh start is
-- counted again in the new one.
-- KEYS: table
-- ARGV: 1 seat, 2 now, 3 window seconds, 4 the count this try's HINCRBY returned
-- Returns {tries, window opened at ('' none)} (tries 0: no such table, or not being played).
local seat = ARGV[1]
local now = tonumber(ARGV[2])
local f = redis.call('HMGET', KEYS[1], 'status', 'moved_at', 'created', 'tries_at:' .. seat, 'tries:' .. seat)
if f[1] ~= 'playing' then return {0, ''} end
local decided = tonumber(f[2] or f[3]) or 0
local opened = tonumber(f[4] or '')
if opened ~= nil and opened < decided then opened = nil end -- a window of an earlier decision
if opened == nil then
  redis.call('HSET', KEYS[1], 'tries_at:' .. seat, ARGV[2])
  return {tonumber(f[5]) or 0, ARGV[2]}
end
if now - opened >= tonumber(ARGV[3]) then
  -- Counted afresh; its next refused try opens the next window.
  redis.call('HSET', KEYS[1], 'tries:' .. seat, 1, 'tries_at:' .. seat, '')
  return {1, ''}
end
local tries = tonumber(f[5]) or 0
if tries < tonumber(ARGV[4]) then tries = redis.call('HINCRBY', KEYS[1], 'tries:' .. seat, 1) end
return {tries, string.format('%.3f', opened)}
