-- A queued ticket cancelled, in its queue's slot; any other status is answered as it is.
-- KEYS: ticket, queue    ARGV: 1 ticket id
-- Returns 'ok' when it was cancelled now, else the status it had ('' when it is gone).
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'queued' then return status or '' end
redis.call('HSET', KEYS[1], 'status', 'cancelled')
redis.call('ZREM', KEYS[2], ARGV[1])
return 'ok'
