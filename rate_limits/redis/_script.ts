/**
 * The Lua scripts of the Redis store, on the server's clock (`TIME`). A check
 * takes ARGV[1] = the number of window counters; per window counter, KEYS
 * holds the log (a list of time, units pairs, oldest first) and its total,
 * ARGV limit, window, cost; then per credit counter, KEYS holds its hash
 * (`b` balance, `at` as of) and ARGV cost, initial, initialAt ('' for now),
 * amount, everyMs, day. It answers allowed, remaining, reset per counter
 * (windows first), then the time it read.
 *
 * @module
 */
import { MAX_CREDITS } from "../credits.ts";

/** Lua helpers of both scripts: the refill boundaries (UTC calendar) and a balance with its refill applied. */
export const CREDIT_LUA = `
local DAY = 86400000
local function days(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end
local function civil(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m
end
local function boundary(y, m, day)
  if m < 1 then y, m = y - 1, m + 12 elseif m > 12 then y, m = y + 1, m - 12 end
  local first = days(y, m, 1)
  local last = (m == 12 and days(y + 1, 1, 1) or days(y, m + 1, 1)) - first
  return (first + math.min(day, last) - 1) * DAY
end
local function period(at, every, day)
  if every > 0 then
    local start = math.floor(at / every) * every
    return start, start + every
  end
  if day == 0 then return 0, -1 end
  local y, m = civil(math.floor(at / DAY))
  local here = boundary(y, m, day)
  if at >= here then return here, boundary(y, m + 1, day) end
  return boundary(y, m - 1, day), here
end
local function balance(key, initial, initial_at, amount, every, day, now)
  local got = redis.call('HMGET', key, 'b', 'at')
  local b, at, dirty = tonumber(got[1]), tonumber(got[2]), false
  if b == nil then b, at, dirty = initial, tonumber(initial_at) or now, true end
  local start, nxt = period(now, every, day)
  if amount > 0 and start > at then b, at, dirty = amount, start, true end
  local reset = -1
  if nxt >= 0 then reset = nxt - now end
  return b, at, reset, dirty
end
local function save(key, b, at)
  redis.call('HSET', key, 'b', string.format('%d', b), 'at', string.format('%d', at))
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** The check (docs/rate-limits.md describes the algorithm). */
export const CHECK_SCRIPT = CREDIT_LUA + `
local n = tonumber(ARGV[1])
local ats, totals, fit = {}, {}, true
for i = 1, n do
  local log, tot = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, window, cost = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
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
local credits = {}
for j = 1, #KEYS - 2 * n do
  local a = 3 * n + 6 * j - 4
  local cost, amount = tonumber(ARGV[a]), tonumber(ARGV[a + 3])
  local b, at, reset, dirty = balance(KEYS[2 * n + j], tonumber(ARGV[a + 1]), ARGV[a + 2], amount,
    tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), now)
  credits[j] = { b, at, reset, dirty, cost, amount }
  if b < cost then fit = false end
end
local out = {}
for i = 1, n do
  local log, tot = KEYS[2 * i - 1], KEYS[2 * i]
  local limit, window, cost = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
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
for j, c in ipairs(credits) do
  local b, at, reset, dirty, cost, amount = c[1], c[2], c[3], c[4], c[5], c[6]
  local allowed = 0
  if b >= cost then allowed = 1 elseif cost > amount then reset = -1 end
  if fit and cost > 0 then b, dirty = b - cost, true end
  if dirty then save(KEYS[2 * n + j], b, at) end
  out[#out + 1] = allowed
  out[#out + 1] = b
  out[#out + 1] = reset
end
out[#out + 1] = now
return out
`;

/**
 * A credit change: KEYS[1] the balance's hash; ARGV initial, initialAt,
 * amount, everyMs, day (as in a check), then `set` or `add` and its number.
 * Answers the balance and ms to the next refill.
 */
export const CHANGE_SCRIPT = CREDIT_LUA + `
local key = KEYS[1]
local b, at, reset = balance(key, tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), now)
if ARGV[6] == 'set' then b = tonumber(ARGV[7]) else b = math.max(0, math.min(${MAX_CREDITS}, b + tonumber(ARGV[7]))) end
save(key, b, at)
return { b, reset }
`;
