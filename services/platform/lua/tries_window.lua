-- A seat's tries after its window ran out: counted again from this one, atomically (two
-- refused requests at once open one window, and each is counted in it). Only a refused
-- try pays for this script; every other try is one HINCRBY (move_limits.py).
-- KEYS: table
-- ARGV: 1 seat, 2 now, 3 window seconds
-- Returns {tries, window start} (tries 0: no such table, or it is not being played).
local seat = ARGV[1]
local f = redis.call('HMGET', KEYS[1], 'status', 'moved_at', 'created', 'tries_at:' .. seat)
if f[1] ~= 'playing' then return {0, ARGV[2]} end
local began = math.max(tonumber(f[2] or f[3]) or 0, tonumber(f[4] or '0') or 0)
if tonumber(ARGV[2]) - began >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'tries:' .. seat, 1, 'tries_at:' .. seat, ARGV[2])
  return {1, ARGV[2]}
end
return {redis.call('HINCRBY', KEYS[1], 'tries:' .. seat, 1), string.format('%.3f', began)}
