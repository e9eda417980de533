/**
 * The Lua script of the Redis store: every counter of a check in one call,
 * on the server's clock (`TIME`). Per counter, KEYS holds the log (a list of
 * time, units pairs, oldest first) and its total; ARGV holds limit, window, cost.
 *
 * @module
 */

/** The script (docs/rate-limits.md describes the algorithm). */
export const CHECK_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS / 2
local ats, totals, fit = {}, {}, true
for i = 1, n do
  local log, tot = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, window, cost = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local at = now
  local last = redis.call('LRANGE', log, -2, -2)
  if #last > 0 and tonumber(last[1]) > at then at = tonumber(last[1]) end
  local total = tonumber(redis.call('GET', tot) or '0')
  local head = redis.call('LRANGE', log, 0, 1)
  local pruned = false
  while #head == 2 and tonumber(head[1]) <= at - window do
    redis.call('LTRIM', log, 2, -1)
    total = total - tonumber(head[2])
    pruned = true
    head = redis.call('LRANGE', log, 0, 1)
  end
  if pruned then
    if #head == 0 then redis.call('DEL', tot) else redis.call('SET', tot, string.format('%d', total), 'KEEPTTL') end
  end
  ats[i], totals[i] = at, total
  if total + cost > limit then fit = false end
end
local out = {}
for i = 1, n do
  local log, tot = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, window, cost = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local at, total = ats[i], totals[i]
  local allowed, remaining, reset = 0, limit - total, window
  if total + cost <= limit then
    allowed = 1
    local head = redis.call('LRANGE', log, 0, 0)
    reset = 0
    if #head > 0 then reset = tonumber(head[1]) + window - at end
    if fit and cost > 0 then
      remaining = remaining - cost
      if #head == 0 then reset = window end
      local last = redis.call('LRANGE', log, -2, -1)
      if #last == 2 and tonumber(last[1]) == at then
        redis.call('LSET', log, -1, string.format('%d', tonumber(last[2]) + cost))
      else
        redis.call('RPUSH', log, string.format('%d', at), string.format('%d', cost))
      end
      local ttl = at + window - now
      redis.call('SET', tot, string.format('%d', total + cost), 'PX', ttl)
      redis.call('PEXPIRE', log, ttl)
    end
  elseif cost <= limit then
    local entries = redis.call('LRANGE', log, 0, -1)
    local freed = 0
    for j = 1, #entries, 2 do
      freed = freed + tonumber(entries[j + 1])
      if freed >= total + cost - limit then
        reset = tonumber(entries[j]) + window - at
        break
      end
    end
  end
  out[#out + 1] = allowed
  out[#out + 1] = remaining
  out[#out + 1] = reset
end
return out
`;
