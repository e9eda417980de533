/**
 * The Lua scripts of the Redis store, on the server's clock (`TIME`, read once
 * per script). Each script reads its inputs in order through `arg()` and
 * `key()`, naming each in a commented `local`, and answers the time it read
 * last (the store's clock offset, `../_clock.ts`). A window's log is a list of
 * (time, units) pairs, oldest first, beside its total; a balance is a hash
 * (`b` balance, `at` as of).
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
-- A balance at now with its refill due (not written): balance, as of, ms to the next refill, whether it
-- must be written, whether the store held it.
local function balance(key, initial, initial_at, amount, every, day, now)
  local got = redis.call('HMGET', key, 'b', 'at')
  local b, at, dirty, held = tonumber(got[1]), tonumber(got[2]), false, true
  if b == nil then b, at, dirty, held = initial, tonumber(initial_at) or now, true, false end
  local start, nxt = period(now, every, day)
  if amount > 0 and start > at then b, at, dirty = amount, start, true end
  local reset = -1
  if nxt >= 0 then reset = nxt - now end
  return b, at, reset, dirty, held
end
local function save(key, b, at)
  redis.call('HSET', key, 'b', string.format('%d', b), 'at', string.format('%d', at))
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local argc, keyc = 0, 0
local function arg() argc = argc + 1 return ARGV[argc] end
local function key() keyc = keyc + 1 return KEYS[keyc] end
`;

/**
 * A batch of checks (docs/rate-limits.md describes the algorithm). Inputs: the
 * number of checks, then per check its deadline, its counters and each
 * counter's inputs (below). Per check it answers 1 and allowed, remaining,
 * reset per counter (windows first), or 0 alone when its deadline had passed
 * (nothing read or written); then the time.
 */
export const CHECK_SCRIPT = CREDIT_LUA + `
local function check(windows, credits)
  local out, fit = {}, true
  for _, w in ipairs(windows) do
    local log, tot = w.log, w.tot
    local at = now
    local last = redis.call('LRANGE', log, -2, -2)
    if #last > 0 and tonumber(last[1]) > at then at = tonumber(last[1]) end
    local total = tonumber(redis.call('GET', tot) or '0')
    local head = redis.call('LRANGE', log, 0, 1)
    local pruned = false
    while #head == 2 and tonumber(head[1]) <= at - w.window do
      redis.call('LTRIM', log, 2, -1)
      total = total - tonumber(head[2])
      pruned = true
      head = redis.call('LRANGE', log, 0, 1)
    end
    if pruned then
      if #head == 0 then redis.call('DEL', tot) else redis.call('SET', tot, string.format('%d', total), 'KEEPTTL') end
    end
    w.at, w.total = at, total
    if total + w.cost > w.limit then fit = false end
  end
  for _, c in ipairs(credits) do
    c.b, c.at, c.reset, c.dirty = balance(c.key, c.initial, c.initial_at, c.amount, c.every, c.day, now)
    if c.b < c.cost then fit = false end
  end
  for _, w in ipairs(windows) do
    local log, tot = w.log, w.tot
    local limit, window, cost, at, total = w.limit, w.window, w.cost, w.at, w.total
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
  for _, c in ipairs(credits) do
    local allowed, b, reset, dirty = 0, c.b, c.reset, c.dirty
    if b >= c.cost then allowed = 1 elseif c.cost > c.amount then reset = -1 end
    if fit and c.cost > 0 then b, dirty = b - c.cost, true end
    if dirty then save(c.key, b, c.at) end
    out[#out + 1] = allowed
    out[#out + 1] = b
    out[#out + 1] = reset
  end
  return out
end

local out = {}
local checks = tonumber(arg())        -- how many checks the batch holds
for _ = 1, checks do
  local deadline = tonumber(arg())    -- the check is applied only before this ms (server clock)
  local n_windows = tonumber(arg())   -- its window counters
  local n_credits = tonumber(arg())   -- its credit counters
  local windows, credits = {}, {}
  for i = 1, n_windows do
    windows[i] = {
      log = key(),                    -- the log: (time, units) pairs, oldest first
      tot = key(),                    -- units in the log
      limit = tonumber(arg()),        -- units per window
      window = tonumber(arg()),       -- window length (ms)
      cost = tonumber(arg()),         -- units this check counts
    }
  end
  for j = 1, n_credits do
    credits[j] = {
      key = key(),                    -- the balance's hash
      cost = tonumber(arg()),         -- credits this check spends
      initial = tonumber(arg()),      -- balance when the store holds none
      initial_at = arg(),             -- when initial was true (ms; '' for now)
      amount = tonumber(arg()),       -- balance after a refill (0: none)
      every = tonumber(arg()),        -- refill period (ms; 0: monthly or none)
      day = tonumber(arg()),          -- monthly refill day (0: none)
    }
  end
  if now >= deadline then
    out[#out + 1] = 0
  else
    out[#out + 1] = 1
    for _, v in ipairs(check(windows, credits)) do out[#out + 1] = v end
  end
end
out[#out + 1] = now
return out
`;

/**
 * A credit change: the refill due, then `set` or `add`, in one step, unless the
 * deadline passed. Answers 1, the balance and ms to the next refill (or 0, 0,
 * 0: nothing changed), then the time.
 */
export const CHANGE_SCRIPT = CREDIT_LUA + `
local hash = key()                    -- the balance's hash
local deadline = tonumber(arg())      -- the change is applied only before this ms (server clock)
local initial = tonumber(arg())       -- balance when the store holds none
local initial_at = arg()              -- when initial was true (ms; '' for now)
local amount = tonumber(arg())        -- balance after a refill (0: none)
local every = tonumber(arg())         -- refill period (ms; 0: monthly or none)
local day = tonumber(arg())           -- monthly refill day (0: none)
local how = arg()                     -- 'set' or 'add'
local n = tonumber(arg())             -- the number set or added
if now >= deadline then return { 0, 0, 0, now } end
local b, at, reset = balance(hash, initial, initial_at, amount, every, day, now)
if how == 'set' then b = n else b = math.max(0, math.min(${MAX_CREDITS}, b + n)) end
save(hash, b, at)
return { 1, b, reset, now }
`;

/**
 * Reads balances without writing: per balance, its hash and its refill
 * (amount, every, day). Answers per balance 1, the balance with the refill
 * due counted, ms to the next refill (or 0, 0, 0 when the store holds none),
 * then the time.
 */
export const READ_SCRIPT = CREDIT_LUA + `
local out = {}
for _ = 1, #KEYS do
  local hash = key()                  -- the balance's hash
  local amount = tonumber(arg())      -- balance after a refill (0: none)
  local every = tonumber(arg())       -- refill period (ms; 0: monthly or none)
  local day = tonumber(arg())         -- monthly refill day (0: none)
  local b, _, reset, _, held = balance(hash, 0, '', amount, every, day, now)
  if held then
    out[#out + 1] = 1
    out[#out + 1] = b
    out[#out + 1] = reset
  else
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
end
out[#out + 1] = now
return out
`;

/** Reads the server's clock (the first round trip of a store, and `ready()`). */
export const TIME_SCRIPT = `
local t = redis.call('TIME')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;
