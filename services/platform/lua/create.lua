-- A new table, written only if no table has this id (a retried creation writes nothing
-- twice): the record, its first log line and the seats' first deadlines. The caller has
-- already listed it in its index shard (store.py).
-- KEYS: table, log
-- ARGV: 1 now, 2 bot_s, 3 away_s, 4 expire seconds ('' none), 5 log entry, field, value, ...
-- Returns the earliest deadline ('' none), or false if the table existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local fields = {}
local by_name = {}
for i = 6, #ARGV, 2 do
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  by_name[ARGV[i]] = ARGV[i + 1]
end
local players = tonumber(by_name['players'])
local f = {}
for s = 0, players - 1 do
  f[3 * s + 1] = by_name['kind:' .. s]
  f[3 * s + 2] = nil
  f[3 * s + 3] = nil
end
local acting = {}
if by_name['status'] == 'playing' then acting = cjson.decode(by_name['to_act']) end
local due = schedule(f, 0, players, acting, tonumber(by_name['decision_seconds']), tonumber(ARGV[1]),
  tonumber(ARGV[2]), tonumber(ARGV[3]), -1, fields)
fields[#fields + 1] = 'due'
fields[#fields + 1] = due
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('RPUSH', KEYS[2], ARGV[5])
if ARGV[4] ~= '' then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
end
return due
