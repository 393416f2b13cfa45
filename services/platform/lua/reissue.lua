-- A bound seat's player asks for a new seat token (the old one stops working).
-- KEYS: table
-- ARGV: seat, player id, new token hash
-- Returns 1 reissued, -1 no table, -2 finished, -3 the seat is not bound to that player,
-- -4 its player left (a bot plays it for good).
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local seat = ARGV[1]
local owner = redis.call('HGET', KEYS[1], 'pid:' .. seat)
if not owner or owner ~= ARGV[2] or not redis.call('HGET', KEYS[1], 'token:' .. seat) then return -3 end
if redis.call('HGET', KEYS[1], 'status') == 'finished' then return -2 end
if redis.call('HEXISTS', KEYS[1], 'left:' .. seat) == 1 then return -4 end
redis.call('HSET', KEYS[1], 'token:' .. seat, ARGV[3])
return 1
