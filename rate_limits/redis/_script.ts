/**
 * The Lua scripts of the Redis store, on the server's clock (`TIME`, read once
 * per script). Each script reads its inputs in order through `arg()` and
 * `key()`, naming each in a commented `local`, and answers the time it read
 * last (the store's clock offset, `../_clock.ts`). A window counter is a
 * packed string of its sub-buckets (below); a balance is a hash (`b` balance, `at`
 * as of). A value they cannot read at a counter's key is an error reply
 * starting `UNREADABLE` (the store's `TypeError`: the check fails closed).
 *
 * @module
 */
import { MAX_CREDITS, MAX_EPOCH_MS, MAX_POLICY_LIMIT } from "../_checks.ts";
import { SUB_BUCKETS } from "../_window.ts";

/** The start of every script: the globals it uses as locals and the server's clock (`TIME`, read once). */
const CLOCK = `
-- The globals the scripts use, as locals (a local is read in one step, a global looked up by name).
local tonumber, ARGV, KEYS, redis, math, string, unpack = tonumber, ARGV, KEYS, redis, math, string, unpack
local MAX_MS = ${MAX_EPOCH_MS}  -- the latest time counted (ms): 10 * t stays exact
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** The readers of a script's inputs, in order (`arg()`, `key()`). */
const READERS = `
local argc, keyc = 0, 0
local function arg() argc = argc + 1 return ARGV[argc] end
local function key() keyc = keyc + 1 return KEYS[keyc] end
`;

/**
 * The credit helpers (the refill boundaries on the UTC calendar, a balance
 * with its refill applied, its write), built by calling `credit_helpers()`:
 * Lua builds a function's closures each time the script runs, so a batch of
 * window counters only (most checks) builds none of them. A balance is read
 * once per script and kept: a change is written by `flush()`, after every
 * check of a batch is decided (an error before it writes nothing).
 */
const CREDIT_HELPERS = `
-- The credit helpers: balance, save, period, flush.
local function credit_helpers()
  local MAX_CREDITS = ${MAX_CREDITS}  -- the most credits a balance holds
  -- The balances this script read or changed, by hash: { balance, as of, whether to write }; and
  -- the hashes to write, in order.
  local held, changed = {}, {}
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
    local b, at, dirty, present = nil, nil, false, true
    local h = held[key]
    if h then
      b, at = h[1], h[2]
    else
      local got = redis.call('HMGET', key, 'b', 'at')
      if got[1] or got[2] then
        b, at = tonumber(got[1]), tonumber(got[2])
        -- A field it cannot read (not a whole number in its range: tonumber also reads inf, nan and
        -- 1e400) is an error (fails closed), never a new balance.
        if not (b and b >= 0 and b <= MAX_CREDITS and b % 1 == 0)
          or not (at and at >= 0 and at <= MAX_MS and at % 1 == 0) then
          error({ err = 'UNREADABLE a credit balance is not a number and a time' })
        end
        held[key] = { b, at, false }
      else
        b, at, dirty, present = initial, tonumber(initial_at) or now, true, false
      end
    end
    local start, nxt = period(now, every, day)
    if amount > 0 and start > at then b, at, dirty = amount, start, true end
    local reset = -1
    if nxt >= 0 then reset = nxt - now end
    return b, at, reset, dirty, present
  end
  -- Keeps a balance's change, to be written by flush().
  local function save(key, b, at)
    local h = held[key]
    if not h then h = {}; held[key] = h end
    if not h[3] then changed[#changed + 1] = key end
    h[1], h[2], h[3] = b, at, true
  end
  local function flush()
    for i = 1, #changed do
      local key = changed[i]
      local h = held[key]
      redis.call('HSET', key, 'b', string.format('%d', h[1]), 'at', string.format('%d', h[2]))
    end
  end
  return balance, save, period, flush
end
`;

/** The clock, the readers and the credit helpers: the start of the credit scripts. */
export const CREDIT_LUA = CLOCK + READERS + CREDIT_HELPERS;

/** A window counter's value: its newest sub-bucket, then its `SUB_BUCKETS + 1` ring slots, as little-endian doubles. */
const LAYOUT = "<" + "d".repeat(SUB_BUCKETS + 2);
/** Lua names of a counter's ring slots, read into locals: `u1, u2, …`. */
const SLOT_NAMES = Array.from({ length: SUB_BUCKETS + 1 }, (_, i) => `u${i + 1}`);
/** Lua: `what` once per ring slot, comma-separated (`0, 0, …`). */
const perSlot = (what: (u: string) => string, separator = ", ") =>
  SLOT_NAMES.map(what).join(separator);

/** Lua: the moment (ms) sub-bucket `q` of a window of `window` ms leaves every window of its counter. */
const leaves = (q: string, window: string) => `ceil((${q} + SLOTS) * ${window} / B)`;

/** `lua` with each line after the first indented by `depth` levels (a fragment placed in a block). */
const indented = (depth: number, lua: string) =>
  lua.trim().replaceAll("\n", "\n" + "  ".repeat(depth));

/*
 * The steps of one window counter, each written once and placed both in the
 * one-check path and in the batch's loop (a Lua function would be a closure
 * built on every run of the script). They use the locals of the place they are
 * put in: `key`, `window`, `c` (the counter's table), `fit`.
 */

/** Lua: `c` set to counter `key` of a `window` read (new when the store holds none) and moved to now. */
const READ_COUNTER = `
local q = floor(now * B / window)
local held = redis.call('GET', key)
if not held then
  c = { ${perSlot(() => "0")}, q, 0, window, true, key, 0, 0, false }
else
  -- A value it cannot read is an error (fails closed), never an empty counter: whole units
  -- (every slot's fraction summed), no more than any limit, a sub-bucket within a Date's range.
  if #held ~= BYTES then error({ err = UNREADABLE }) end
  local head, ${perSlot((u) => u)} = unpack_counter(LAYOUT, held)
  local total = ${perSlot((u) => u, " + ")}
  if not (min(${perSlot((u) => u)}) >= 0 and ${perSlot((u) => `${u} % 1`, " + ")} == 0
    and total <= MAX_LIMIT and head >= 0 and head % 1 == 0 and head * window <= MAX_MS * B) then
    error({ err = UNREADABLE })
  end
  c = { ${perSlot((u) => u)}, head, total, window, false, key, 0, 0, false }
  if q > head then
    -- Its newest sub-bucket moved: the sub-buckets that left every window are emptied.
    for h = head + 1, min(q, head + SLOTS) do
      local s = h % SLOTS + 1
      total, c[s] = total - c[s], 0
    end
    c[HEAD], c[TOTAL], c[MOVED] = q, total, true
  end
end`;

/**
 * Lua: the check counting `c` (its LIMIT and COST set) consumes when `fit` and
 * it costs units (`consumed`); its answer `allowed`, `limit - total`, `reset`.
 */
const COUNT = `
local cost = c[COST]
local consumed = fit and cost > 0
if consumed then
  local s = c[HEAD] % SLOTS + 1
  c[s], c[TOTAL] = c[s] + cost, c[TOTAL] + cost
end
-- Its answer at its moment (a clock that stepped back counts at the start of the newest sub-bucket).
local head, total, window, limit = c[HEAD], c[TOTAL], c[WINDOW], c[LIMIT]
local at = max(now, ceil(head * window / B))
local allowed, reset = 0, window
if consumed or total + cost <= limit then
  allowed, reset = 1, 0
  if total > 0 then
    -- Room again when its oldest sub-bucket with units leaves the window.
    for q = head - B, head do
      if c[q % SLOTS + 1] > 0 then reset = ${leaves("q", "window")} - at break end
    end
  end
elseif cost <= limit then
  -- Room again when enough of its oldest units have left the window.
  local freed = 0
  for q = head - B, head do
    freed = freed + c[q % SLOTS + 1]
    if freed >= total + cost - limit then reset = ${leaves("q", "window")} - at break end
  end
end`;

/** Lua: counter `c`, consumed from, written. */
const WRITE = `
local head = c[HEAD]
if c[MOVED] then
  -- Written whole; expires when its newest sub-bucket leaves every window.
  local ttl = ${leaves("head", "c[WINDOW]")} - now
  if ttl < 1 then ttl = 1 end
  redis.call('SET', c[KEY], pack(LAYOUT, head, unpack(c, 1, SLOTS)), 'PX', ttl)
else
  -- Only its newest slot changed (8 bytes at the slot's offset).
  local s = head % SLOTS
  redis.call('SETRANGE', c[KEY], 8 * (s + 1), pack('<d', c[s + 1]))
end`;

/**
 * A batch of checks (docs/rate-limits.md, "The algorithm: a sliding window of
 * sub-buckets"). A window counter is one string key: its newest sub-bucket,
 * then the units of its `B + 1` ring slots (slot `q % (B + 1)` holds
 * sub-bucket `q`), packed as doubles (`struct`): one `GET`, and when a check
 * consumes, one `SETRANGE` of its newest slot (8 bytes; the expiry it holds is
 * the same moment), or a `SET` with `PX` (the counter's expiry) when it is new
 * or its newest sub-bucket moved, whatever the limit and the traffic. A batch
 * reads each counter and balance once: a later check of the same counter (a
 * hot key's checks, sent together) starts from what the earlier ones left, in
 * Lua, with no `GET`, and a refused one writes nothing. Every write comes after
 * every check is decided, once per counter and balance: a batch with a
 * counter or balance it cannot read (an error answering all its checks)
 * writes nothing. Inputs: the number of checks, then per check its deadline,
 * its counters and each counter's inputs (below); or for one check of one
 * window counter, its deadline and that counter's inputs. Per check it answers 1 and
 * allowed, remaining, reset per counter (windows first), or 0 alone when its
 * deadline had passed (nothing read or written); then the time.
 *
 * The work per check is kept small (Redis runs one script at a time, and its
 * time shows in every client's wait): a window counter is one table built in
 * one step (its ring slots, then its fields, by index), a consuming check's
 * write 8 bytes, and the credit helpers built only at a batch's first credit
 * counter. One check of one window counter (most checks), in its four
 * words, takes the same steps before any of the batch's tables or the credit
 * helpers are built (a tenth to a fifth of the script's time on the server).
 */
export const CHECK_SCRIPT = CLOCK + READERS + `
local B = ${SUB_BUCKETS}                          -- sub-buckets per window
local SLOTS = B + 1                   -- sub-buckets a check counts
local LAYOUT = '${LAYOUT}'        -- a counter's value: its newest sub-bucket, then its SLOTS slots
local BYTES = ${8 * (SUB_BUCKETS + 2)}                      -- its length
local MAX_LIMIT = ${MAX_POLICY_LIMIT}     -- the largest limit: a counter never holds more units
local UNREADABLE = 'UNREADABLE a window counter is not in its layout' -- the error of a value it cannot read
local floor, ceil, max, min, pack, unpack_counter = math.floor, math.ceil, math.max, math.min, struct.pack, struct.unpack
-- A window counter is one table: its units per ring slot (sub-bucket q in c[q % SLOTS + 1]), then these:
local HEAD = SLOTS + 1                -- its newest sub-bucket
local TOTAL = SLOTS + 2               -- its units
local WINDOW = SLOTS + 3              -- its window (ms)
local MOVED = SLOTS + 4               -- whether it is written whole (new, or its newest sub-bucket moved)
local KEY = SLOTS + 5                 -- its key
local LIMIT = SLOTS + 6               -- the limit of the check counting it now
local COST = SLOTS + 7                -- that check's units
local DIRTY = SLOTS + 8               -- whether a check consumed from it (it is in writes)

if #KEYS == 1 and #ARGV == 4 then
  -- One check of one window counter (most checks), in four words (a batch holding one key has at
  -- least seven): the batch's steps below, none of its tables.
  local deadline = tonumber(arg())    -- the check is applied only before this ms (server clock)
  local key = key()                   -- the counter: newest sub-bucket, then units per ring slot
  local limit = tonumber(arg())       -- units per window
  local window = tonumber(arg())      -- window length (ms)
  local cost = tonumber(arg())        -- units this check counts
  if now >= deadline then return { 0, now } end
  local c
  ${indented(1, READ_COUNTER)}
  c[LIMIT], c[COST] = limit, cost
  local fit = c[TOTAL] + cost <= limit
  ${indented(1, COUNT)}
  if consumed then
    ${indented(2, WRITE)}
  end
  return { 1, allowed, limit - total, reset, now }
end
` + CREDIT_HELPERS + `
local checks = tonumber(arg())        -- how many checks the batch holds
-- The window counters this batch read, by key, kept up to date as its checks consume, when it holds
-- more than one.
local counters = #KEYS > 1 and {} or nil
-- The counters consumed from, written once every check is decided (an error before writes nothing).
local writes = {}
local balance, save, flush            -- the credit helpers, built at the batch's first credit counter
local out, n_out = {}, 0
-- One check's window counters and balances, the lists reused from check to check.
local windows, credits = {}, {}
for _ = 1, checks do
  local deadline = tonumber(arg())    -- the check is applied only before this ms (server clock)
  local n_windows = tonumber(arg())   -- its window counters
  local n_credits = tonumber(arg())   -- its credit counters
  local due = now < deadline          -- whether it is applied (else nothing is read or written)
  -- Whether every counter of the check has room: it consumes from all of them, or from none.
  local fit = due
  for i = 1, n_windows do
    local key = key()                 -- the counter: newest sub-bucket, then units per ring slot
    local limit = tonumber(arg())     -- units per window
    local window = tonumber(arg())    -- window length (ms)
    local cost = tonumber(arg())      -- units this check counts
    if due then
      -- The counter at now: the batch's copy, or read and moved to now.
      local c = counters and counters[key]
      if not c or c[WINDOW] ~= window then
        ${indented(4, READ_COUNTER)}
        if counters then counters[key] = c end
      end
      c[LIMIT], c[COST] = limit, cost
      if c[TOTAL] + cost > limit then fit = false end
      windows[i] = c
    end
  end
  if due and n_credits > 0 and balance == nil then balance, save, _, flush = credit_helpers() end
  for j = 1, n_credits do
    local hash = key()                -- the balance's hash
    local cost = tonumber(arg())      -- credits this check spends
    local initial = tonumber(arg())   -- balance when the store holds none
    local initial_at = arg()          -- when initial was true (ms; '' for now)
    local amount = tonumber(arg())    -- balance after a refill (0: none)
    local every = tonumber(arg())     -- refill period (ms; 0: monthly or none)
    local day = tonumber(arg())       -- monthly refill day (0: none)
    if due then
      local c = credits[j] or {}
      credits[j] = c
      c.key, c.cost, c.amount = hash, cost, amount
      c.b, c.at, c.reset, c.dirty = balance(hash, initial, initial_at, amount, every, day, now)
      if c.b < cost then fit = false end
    end
  end
  n_out = n_out + 1
  if not due then
    out[n_out] = 0
  else
    out[n_out] = 1
    for i = 1, n_windows do
      local c = windows[i]
      ${indented(3, COUNT)}
      if consumed and not c[DIRTY] then c[DIRTY], writes[#writes + 1] = true, c end
      out[n_out + 1], out[n_out + 2], out[n_out + 3] = allowed, limit - total, reset
      n_out = n_out + 3
    end
    for j = 1, n_credits do
      local c = credits[j]
      local allowed, b, reset, dirty = 0, c.b, c.reset, c.dirty
      if b >= c.cost then allowed = 1 elseif c.cost > c.amount then reset = -1 end
      if fit and c.cost > 0 then b, dirty = b - c.cost, true end
      if dirty then save(c.key, b, c.at) end
      out[n_out + 1], out[n_out + 2], out[n_out + 3] = allowed, b, reset
      n_out = n_out + 3
    end
  end
end
-- Every check decided: the writes.
for i = 1, #writes do
  local c = writes[i]
  ${indented(1, WRITE)}
end
if flush then flush() end
out[n_out + 1] = now
return out
`;

/**
 * A credit change: the refill due, then `set`, `add` or `keep`, and with
 * `anchor` the balance as of now (another rule refills first at its next
 * boundary after now), in one step, unless the deadline passed. Answers 1, the balance, ms to the
 * next refill and the balance it was applied to (or 0, 0, 0, 0: nothing changed), then the time.
 */
export const CHANGE_SCRIPT = CREDIT_LUA + `
local hash = key()                    -- the balance's hash
local deadline = tonumber(arg())      -- the change is applied only before this ms (server clock)
local initial = tonumber(arg())       -- balance when the store holds none
local initial_at = arg()              -- when initial was true (ms; '' for now)
local amount = tonumber(arg())        -- balance after a refill (0: none)
local every = tonumber(arg())         -- refill period (ms; 0: monthly or none)
local day = tonumber(arg())           -- monthly refill day (0: none)
local how = arg()                     -- 'set', 'add' or 'keep'
local n = tonumber(arg())             -- the number set or added (0 to keep)
local anchor = arg() == '1'           -- '1': the balance as of now, '0': as of its last refill
if now >= deadline then return { 0, 0, 0, 0, now } end
local balance, save, _, flush = credit_helpers()
local b, at, reset = balance(hash, initial, initial_at, amount, every, day, now)
local before = b
if how == 'set' then b = n
elseif how == 'add' then b = math.max(0, math.min(${MAX_CREDITS}, b + n)) end
if anchor then at = math.max(at, now) end
save(hash, b, at)
flush()
return { 1, b, reset, before, now }
`;

/**
 * Reads balances without writing: per balance, its hash and its refill
 * (amount, every, day). Answers per balance 1, the balance with the refill
 * due counted, ms to the next refill (or 0, 0, 0 when the store holds none),
 * then the time.
 */
export const READ_SCRIPT = CREDIT_LUA + `
local balance = credit_helpers()
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
