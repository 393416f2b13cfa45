-- A matched group leaves its queue, in the queue's slot: every ticket still queued, or
-- nothing happens (a ticket cancelled meanwhile voids the group). The formed table's plan
-- is kept beside the tickets until the table is written (tickets.py), so a crash between
-- this and the table's own write is finished by the next pass, never lost.
-- KEYS: queue, forming hash, ticket, ...
-- ARGV: 1 table id, 2 plan json, 3 now, 4 bots (seats bots filled), then each ticket's
--       id and seat, in KEYS' order
-- Returns 1 seated, 0 a ticket was no longer queued.
for i = 3, #KEYS do
  local id = ARGV[5 + 2 * (i - 3)]
  if redis.call('HGET', KEYS[i], 'status') ~= 'queued' or not redis.call('ZSCORE', KEYS[1], id) then
    return 0
  end
end
for i = 3, #KEYS do
  local id = ARGV[5 + 2 * (i - 3)]
  redis.call('ZREM', KEYS[1], id)
  redis.call('HSET', KEYS[i], 'status', 'matched', 'table', ARGV[1], 'seat', ARGV[6 + 2 * (i - 3)],
    'matched_at', ARGV[3], 'bots', ARGV[4])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
