-- Take a human seat while the table waits; the claim that fills the last human seat
-- starts the game (the record persists from then on). In the table's slot only: the
-- caller moves the table from its shard's open index to the live one (store.py).
-- KEYS: table, log, updates channel
-- ARGV: 1 seat, 2 token hash, 3 player, 4 now, 5 bot_s, 6 away_s, 7 log entry,
--       8 player id ('' none), 9 players
-- Returns {outcome, due}: outcome 2 the table started, 1 claimed, -1 no table,
-- -2 not waiting, -3 not a human seat, -4 already taken, -5 the player holds another
-- seat of this rated table.
local players = tonumber(ARGV[9])
local names = seat_fields({'status', 'rated', 'to_act', 'decision_seconds'}, players)
for s = 0, players - 1 do
  names[#names + 1] = 'token:' .. s
  names[#names + 1] = 'pid:' .. s
end
local f = redis.call('HMGET', KEYS[1], unpack(names))
if not f[1] then return {-1, ''} end
if f[1] ~= 'waiting' then return {-2, ''} end
local seat = tonumber(ARGV[1])
local tokens = 4 + 3 * players
local kind = seat_at(f, 4, seat)
if kind ~= 'human' then return {-3, ''} end
if f[tokens + 2 * seat + 1] then return {-4, ''} end
if ARGV[8] ~= '' and f[2] == '1' then
  for s = 0, players - 1 do
    if f[tokens + 2 * s + 2] == ARGV[8] then return {-5, ''} end
  end
end
local out = {'token:' .. seat, ARGV[2], 'player:' .. seat, ARGV[3]}
if ARGV[8] ~= '' then
  out[#out + 1] = 'pid:' .. seat
  out[#out + 1] = ARGV[8]
end
local started = 1
for s = 0, players - 1 do
  if s ~= seat and seat_at(f, 4, s) == 'human' and not f[tokens + 2 * s + 1] then started = 0 end
end
local due = ''
if started == 1 then
  out[#out + 1] = 'status'
  out[#out + 1] = 'playing'
  due = schedule(f, 4, players, cjson.decode(f[3]), tonumber(f[4]), tonumber(ARGV[4]),
    tonumber(ARGV[5]), tonumber(ARGV[6]), -1, out)
  out[#out + 1] = 'due'
  out[#out + 1] = due
end
redis.call('HSET', KEYS[1], unpack(out))
redis.call('RPUSH', KEYS[2], ARGV[7])
if started == 1 then
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
redis.call('SPUBLISH', KEYS[3], '{"seats":true}')
return {1 + started, due}
