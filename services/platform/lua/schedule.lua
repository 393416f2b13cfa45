-- Shared by the scripts that change who must act or how long they may take outside a
-- move (present, leave, reschedule, claim, create), so their rule for seat deadlines lives
-- in one place. It works on fields the script already read (one HMGET) and adds its writes
-- to the script's one HSET. A move's deadlines are worked out by the gateway by the same
-- rule (seat_deadlines.py: keep the two alike), so the commit script runs none of this.
--
-- A seat keeps a deadline it already has (an out-of-turn answer is not given more time
-- because someone else moved), except the seat named by `reset`, whose decision just
-- changed (-1: every seat). Bots get a short safety-net deadline, away seats a short one,
-- humans the table's decision time. Returns the earliest deadline ('' when nobody must
-- act): the caller files the table under it in its shard's deadline index.

-- The fields `seat_fields` asks HMGET for, per seat, after `first` leading fields.
local function seat_fields(names, players)
  for s = 0, players - 1 do
    names[#names + 1] = 'kind:' .. s
    names[#names + 1] = 'away:' .. s
    names[#names + 1] = 'deadline:' .. s
  end
  return names
end

-- Seat s's (kind, away, deadline) from an HMGET reply laid out by seat_fields.
local function seat_at(f, first, s)
  local i = first + 3 * s
  return f[i + 1], f[i + 2] == '1', f[i + 3]
end

local function schedule(f, first, players, acting_list, decision_s, now, bot_s, away_s, reset, out)
  local acting = {}
  for _, s in ipairs(acting_list) do acting[s] = true end
  local earliest = nil
  for s = 0, players - 1 do
    local kind, away, raw = seat_at(f, first, s)
    local key = 'deadline:' .. s
    if not acting[s] then
      if raw and raw ~= '' then
        out[#out + 1] = key
        out[#out + 1] = ''
      end
    else
      local at = nil
      if raw and raw ~= '' then at = tonumber(raw) end
      if at == nil or reset == -1 or reset == s then
        local wait = decision_s
        if kind == 'bot' then
          wait = bot_s
        elseif away then
          -- Away shortens the wait; it never lengthens a table's own shorter time.
          wait = math.min(away_s, wait)
        end
        at = now + wait
        out[#out + 1] = key
        out[#out + 1] = string.format('%.3f', at)
      end
      if earliest == nil or at < earliest then earliest = at end
    end
  end
  if earliest == nil then return '' end
  return string.format('%.3f', earliest)
end
