-- The log's oldest block of lines, sealed: `:log`'s first BLOCK entries leave it for the
-- chunk at the end of `:logz`, which the gateway packed from them (packing.pack_log_chunk),
-- after the lines that chunk held if it is not full (then it replaces that chunk) or as a
-- new chunk. The check is the record's count of sealed blocks as the gateway read it with
-- those lines: only a seal moves `:log`'s head or changes a chunk, and every seal counts
-- itself, so an unchanged count means the same lines (two gateways sealing the same
-- block: one seals, the other writes nothing). A finished table is left as it is (its
-- keys have their TTL; the archive reads either).
-- With ARGV[4] '2' the block went to the table's file instead (log_blocks.py, appended
-- before this runs): `:logz` is left alone and the record's `logf` says the sealed blocks
-- are in the file. A table seals one way from its first block to its end: to the file
-- only if it has no chunk in `:logz`, to `:logz` only if it has none in a file.
-- KEYS: table, log, log chunks
-- ARGV: 1 blocks expected, 2 the chunk, 3 lines sealed now, 4 '1': it replaces the last
-- chunk, '2': it is in the file
-- Returns 1 sealed, 0 not (the count moved, or the table is over or gone).
local f = redis.call('HMGET', KEYS[1], 'logz', 'status', 'logf')
if (f[1] or '0') ~= ARGV[1] or f[2] ~= 'playing' then return 0 end
local to_file = ARGV[4] == '2'
if to_file ~= (f[3] == '1') and not (to_file and ARGV[1] == '0') then return 0 end
redis.call('LPOP', KEYS[2], tonumber(ARGV[3]))
if to_file then
  redis.call('HSET', KEYS[1], 'logf', '1')
elseif ARGV[4] == '1' then
  redis.call('LSET', KEYS[3], -1, ARGV[2])
else
  redis.call('RPUSH', KEYS[3], ARGV[2])
end
redis.call('HSET', KEYS[1], 'logz', tonumber(ARGV[1]) + 1)
return 1
