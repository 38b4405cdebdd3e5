// The Lua scripts behind every operation. Each runs atomically inside Redis, so each operation is
// linearizable and costs one round trip.
//
// Conventions (all scripts but `open`):
//   KEYS[1] = the object's key (a hash: _k kind, _n readable name, the object's fields)
//   ARGV[1] = the kind the caller expects, ARGV[2] = client id ('' for read-only calls),
//   ARGV[3] = sequence number, ARGV[4..] = the operation's arguments.
// Auxiliary values live under KEYS[1] .. '\31' .. suffix (call records, waiters, wake-up lists,
// queue items). The key is "{namespace:name}", a Redis Cluster hash tag that every auxiliary key
// starts with, so an object and its auxiliary values are always in one slot (one node).
// Scripts return arrays of strings and integers only (never Lua numbers with fractions: those
// would be truncated), so a recorded result replays exactly.
#include "scripts.hpp"

#include "sha1.hpp"

#include <array>
#include <stdexcept>
#include <string_view>

namespace cppless::shared::detail {
namespace {

// The common part of every operation script, generated per operation (see build()) so the hot
// path creates no argument tables. One HMGET reads the kind and the fields the operation needs:
// the kind check (never read an object as something else) and the read cost one command. A
// mutating call's record is a key of its own, K\31r<client id>, holding "seq|" then the result
// (n<digits>; for numbers, s<len>:<bytes> for strings, f for nil), written by done() with the new
// state and kept for record_ttl after the client's last change to the object: a retry of the
// client's last call (within its retry budget, far shorter) returns the recorded result; an older
// call (a stray duplicate arriving late) is refused. Records expire, so an object does not grow
// with every client that ever changed it.
constexpr const char* check_kind = R"lua(
if got[1] ~= KIND then
  if got[1] then return redis.error_reply('CPPLESS_TYPE ' .. (redis.call('HGET', K, '_n') or got[1])) end
  if redis.call('EXISTS', K) == 1 then return redis.error_reply('CPPLESS_FOREIGN') end
  return redis.error_reply('CPPLESS_MISSING')
end
)lua";

constexpr const char* check_call = R"lua(
local RK = K .. '\31r' .. CID
local rec = redis.call('GET', RK)
if rec then
  local bar = string.find(rec, '|', 1, true)
  local last, s = tonumber(string.sub(rec, 1, bar - 1)), tonumber(SEQ)
  if s < last then return redis.error_reply('CPPLESS_STALE call ' .. SEQ .. ' of client ' .. CID .. ' precedes ' .. last) end
  if s == last then
    local out, pos = {}, bar + 1
    while pos <= #rec do
      local t = string.sub(rec, pos, pos)
      if t == 'n' then
        local e = string.find(rec, ';', pos, true)
        out[#out + 1] = tonumber(string.sub(rec, pos + 1, e - 1))
        pos = e + 1
      elseif t == 's' then
        local c = string.find(rec, ':', pos, true)
        local n = tonumber(string.sub(rec, pos + 1, c - 1))
        out[#out + 1] = string.sub(rec, c + 1, c + n)
        pos = c + n + 1
      else
        out[#out + 1] = false
        pos = pos + 1
      end
    end
    return out
  end
end
local function enc(v)
  if type(v) == 'number' then return 'n' .. string.format('%d', v) .. ';' end
  if v then return 's' .. #v .. ':' .. v end
  return 'f'
end
-- Records this call's result (one or two values) and returns it.
local function done(a, b)
  if b == nil then
    redis.call('SET', RK, SEQ .. '|' .. enc(a), 'PX', RECORD_TTL)
    return {a}
  end
  redis.call('SET', RK, SEQ .. '|' .. enc(a) .. enc(b), 'PX', RECORD_TTL)
  return {a, b}
end
)lua";

// Helpers some operations need (added to their scripts only).
constexpr const char* exact_int = R"lua(
-- A Lua number is exact below 2^53: then its decimal text is exact too; else nil.
local function int(n)
  if n > -9007199254740992 and n < 9007199254740992 then return string.format('%d', n) end
  return nil
end
)lua";

// Numbers in hashes are decimal text. Comparisons are exact: as Lua numbers (doubles) while both
// are below 2^53, as canonical decimal text (no leading zeros, no "-0") beyond.
constexpr const char* numeric = R"lua(
local function ncmp(a, b, class)
  local x, y = tonumber(a), tonumber(b)
  if class == 'i' and not (x > -9007199254740992 and x < 9007199254740992 and y > -9007199254740992 and y < 9007199254740992) then
    -- Beyond 2^53 doubles are not exact: compare the canonical decimal texts (sign, length,
    -- then digits; byte-wise, as Lua's string < would use strcoll).
    local na, nb = string.byte(a, 1) == 45, string.byte(b, 1) == 45
    if na ~= nb then if na then return -1 else return 1 end end
    local r = 0
    if #a ~= #b then
      if #a < #b then r = -1 else r = 1 end
    else
      for i = 1, #a do
        local p, q = string.byte(a, i), string.byte(b, i)
        if p ~= q then
          if p < q then r = -1 else r = 1 end
          break
        end
      end
    end
    if na then return -r end
    return r
  end
  if x < y then return -1 elseif x > y then return 1 end
  return 0
end
)lua";

// Waiters: a caller that must block registers in the same script that found it must wait, then
// BLPOPs its own wake list K\31t<client id>. Registered waiters form the set K\31ws, so a waiter
// that registers again (after a lost connection) is still counted once; wake_all pushes one
// token to the list of every registered waiter and empties the set. A token waits in its list
// until taken, so no wake-up is lost between the check and the BLPOP, and no waiter can take
// another's. Token lists expire, so tokens of waiters that left are garbage-collected.
constexpr const char* waiters = R"lua(
local WS = K .. '\31ws'
local function wait_register()
  redis.call('SADD', WS, CID)
  redis.call('DEL', K .. '\31t' .. CID)  -- a token left by an earlier wait is stale now
end
-- Leaves the waiters; a token already pushed for the caller is dropped.
local function wait_withdraw()
  if redis.call('SREM', WS, CID) == 0 then redis.call('DEL', K .. '\31t' .. CID) end
end
local function wake_all()
  local ids = redis.call('SMEMBERS', WS)
  for i = 1, #ids do
    local list = K .. '\31t' .. ids[i]
    redis.call('RPUSH', list, '1')
    redis.call('PEXPIRE', list, 600000)
  end
  if #ids > 0 then redis.call('DEL', WS) end
end
)lua";

// Byte arrays: the index (ARGV[4]) must be an integer in [0, size) (size is F1).
constexpr const char* index_check = R"lua(
local idx = tonumber(ARGV[4])
if not idx or idx < 0 or idx >= tonumber(F1) or idx ~= math.floor(idx) then
  return redis.error_reply('CPPLESS_INDEX index ' .. ARGV[4] .. ' of a byte array of ' .. F1)
end
)lua";

// Barrier tokens: the last arrival of generation g pushes parties - 1 tokens to K\31w<g>, one
// for each earlier arrival of g (arrivals are recorded calls: never counted twice).
constexpr const char* tokens = R"lua(
local function push_tokens(list, n)
  while n > 0 do
    local batch = {}
    for i = 1, math.min(n, 1000) do batch[i] = '1' end
    redis.call('RPUSH', list, unpack(batch))
    n = n - #batch
  end
  redis.call('PEXPIRE', list, 600000)
end
)lua";

// open: create the object if the name is free, else check kind and parameters.
// ARGV[1] kind, ARGV[2] readable name, ARGV[3] number of checked parameters, then the checked
// (field, value) pairs, then fields written on creation only.
constexpr const char* open_body = R"lua(
local K = KEYS[1]
local found = redis.call('HGET', K, '_k')
if not found and redis.call('EXISTS', K) == 1 then return redis.error_reply('CPPLESS_FOREIGN') end
if not found then
  local f = {'_k', ARGV[1], '_n', ARGV[2]}
  for i = 4, #ARGV do f[#f + 1] = ARGV[i] end
  redis.call('HSET', K, unpack(f))
  return 1
end
if found ~= ARGV[1] then return redis.error_reply('CPPLESS_TYPE ' .. (redis.call('HGET', K, '_n') or found)) end
for i = 0, tonumber(ARGV[3]) - 1 do
  local field, want = ARGV[4 + 2 * i], ARGV[5 + 2 * i]
  local have = redis.call('HGET', K, field)
  if have ~= want then return redis.error_reply('CPPLESS_PARAM ' .. field .. ' ' .. tostring(have)) end
end
return 0
)lua";

enum : unsigned { h_numeric = 1, h_tokens = 2, h_int = 4, h_waiters = 8, h_index = 16 };

struct op {
  script id;
  bool mutating;       // called with a call id: reads the caller's record, writes one
  const char* fields;  // what the HMGET reads after _k (and the record): Lua expressions
  unsigned helpers;    // extra helper code: h_numeric | h_tokens | h_int | h_waiters
  const char* body;    // sees F1, F2, ... (the fields), K, KIND, CID, SEQ, done()
};

// The operations. Fields: counter {v}; atomic {v}; best {v, p} (absent before the first offer);
// barrier {parties, arrived, gen}; latch {count}; semaphore {permits}; future {has, v}; map {n,
// and one field '=' .. key per entry}; queue items in the list K\31l, the item a blocking pop
// moved in K\31p<client>; waiters of latch, semaphore and future in K\31ws and K\31t<client>;
// barrier wake-up lists K\31w<generation>. Latch and future waiting: event_ops below.
const std::array<op, 41> ops = {{
    // Exact in Lua while both numbers are below 2^53 (one write); beyond, Redis' HINCRBY (64-bit,
    // refuses overflow).
    {script::counter_add, true, "'v'", h_int, R"lua(
local cur, d = tonumber(F1), tonumber(ARGV[4])
local s = int(cur) and int(d) and int(cur + d)
if s then
  redis.call('HSET', K, 'v', s)
else
  redis.call('HINCRBY', K, 'v', ARGV[4])
  s = redis.call('HGET', K, 'v')
end
return done(s)
)lua"},
    {script::counter_get, false, "'v'", 0, R"lua(
return {F1}
)lua"},
    {script::counter_set, true, "'v'", 0, R"lua(
redis.call('HSET', K, 'v', ARGV[4])
return done(F1)
)lua"},
    {script::atomic_load, false, "'v'", 0, R"lua(
return {F1}
)lua"},
    {script::atomic_store, true, "", 0, R"lua(
redis.call('HSET', K, 'v', ARGV[4])
return done(1)
)lua"},
    {script::atomic_exchange, true, "'v'", 0, R"lua(
redis.call('HSET', K, 'v', ARGV[4])
return done(F1)
)lua"},
    {script::atomic_cas, true, "'v'", 0, R"lua(
if F1 == ARGV[4] then
  redis.call('HSET', K, 'v', ARGV[5])
  return done(1, F1)
end
return done(0, F1)
)lua"},
    // ARGV[4] value, ARGV[5] payload, ARGV[6] 'i' or 'f', ARGV[7] 'max' or 'min'. An offer that
    // does not improve changes nothing and is not recorded: repeating it can never improve either
    // (the best value only gets better), so a retry needs no record.
    {script::best_offer, true, "'v'", h_numeric, R"lua(
local better = not F1
if not better then
  local c = ncmp(ARGV[4], F1, ARGV[6])
  if ARGV[7] == 'max' then better = c > 0 else better = c < 0 end
end
if better then
  redis.call('HSET', K, 'v', ARGV[4], 'p', ARGV[5])
  return done(1)
end
return {0}
)lua"},
    // ARGV[4] '1': with the payload (not even read otherwise: it may be large). No value yet:
    // nil (the client answers with the worst value).
    {script::best_get, false, "'v', ARGV[4] == '1' and 'p' or 'v'", 0, R"lua(
return {F1 and 1 or 0, F1 or '', F2 or ''}
)lua"},
    // Returns {released?, generation}. The last arrival opens generation g for the others by
    // pushing parties - 1 tokens to K\31w<g>, and starts generation g + 1.
    {script::barrier_arrive, true, "'parties', 'gen', 'arrived'", h_tokens, R"lua(
local parties, gen, n = tonumber(F1), F2, tonumber(F3) + 1
if n >= parties then
  redis.call('HSET', K, 'arrived', '0', 'gen', tostring(tonumber(gen) + 1))
  if parties > 1 then push_tokens(K .. '\31w' .. gen, parties - 1) end
  return done(1, gen)
end
redis.call('HSET', K, 'arrived', tostring(n))
return done(0, gen)
)lua"},
    // A waiter of generation ARGV[4] gives up: returns 1 if the generation opened meanwhile (the
    // waiter passed after all; its token is taken), or 0 and the arrivals left after withdrawing.
    {script::barrier_withdraw, true, "'gen', 'arrived'", 0, R"lua(
if F1 == ARGV[4] then
  local left = tonumber(F2) - 1
  redis.call('HSET', K, 'arrived', tostring(left))
  return done(0, left)
end
redis.call('LPOP', K .. '\31w' .. ARGV[4])
return done(1)
)lua"},
    {script::barrier_check, false, "'gen', 'arrived'", 0, R"lua(
if F1 == ARGV[4] then return {0, tonumber(F2)} end
return {1, 0}
)lua"},
    {script::latch_count_down, true, "'count'", h_waiters, R"lua(
local c = tonumber(F1)
if c > 0 then
  c = math.max(c - tonumber(ARGV[4]), 0)
  redis.call('HSET', K, 'count', tostring(c))
  if c == 0 then wake_all() end
end
return done(c)
)lua"},
    {script::latch_get, false, "'count'", 0, R"lua(
return {tonumber(F1)}
)lua"},
    // ARGV[4] permits wanted, ARGV[5] '1': register as a waiter when they are not there.
    {script::sem_acquire, true, "'permits'", h_waiters, R"lua(
local p, n = tonumber(F1), tonumber(ARGV[4])
if p >= n then
  redis.call('HSET', K, 'permits', tostring(p - n))
  return done(1)
end
if ARGV[5] == '1' then wait_register() end
return done(0)
)lua"},
    // A waiter gives up: it leaves the waiters, then makes one last attempt.
    {script::sem_withdraw, true, "'permits'", h_waiters, R"lua(
wait_withdraw()
local p, n = tonumber(F1), tonumber(ARGV[4])
if p >= n then
  redis.call('HSET', K, 'permits', tostring(p - n))
  return done(1)
end
return done(0)
)lua"},
    // Wakes every registered waiter; each tries again (the semaphore is not fair). Waking only n
    // of them would lose a wake-up: the one woken may need more permits than there are, while
    // one that needs fewer sleeps on.
    {script::sem_release, true, "'permits'", h_waiters, R"lua(
local p = tonumber(F1) + tonumber(ARGV[4])
redis.call('HSET', K, 'permits', tostring(p))
wake_all()
return done(p)
)lua"},
    {script::sem_get, false, "'permits'", 0, R"lua(
return {tonumber(F1)}
)lua"},
    {script::future_set, true, "'has'", h_waiters, R"lua(
if F1 == '1' then return redis.error_reply('CPPLESS_SET') end
redis.call('HSET', K, 'v', ARGV[4], 'has', '1')
wake_all()
return done(1)
)lua"},
    {script::future_get, false, "'has', 'v'", 0, R"lua(
return {F1, F2}
)lua"},
    {script::map_get, false, "'=' .. ARGV[4]", 0, R"lua(
return {F1}
)lua"},
    {script::map_put, true, "'=' .. ARGV[4], 'n'", 0, R"lua(
local new, n = 0, tonumber(F2)
if not F1 then
  new = 1
  n = n + 1
end
redis.call('HSET', K, '=' .. ARGV[4], ARGV[5], 'n', tostring(n))
return done(new)
)lua"},
    {script::map_erase, true, "'=' .. ARGV[4], 'n'", 0, R"lua(
if not F1 then return done(0) end
redis.call('HDEL', K, '=' .. ARGV[4])
redis.call('HSET', K, 'n', tostring(tonumber(F2) - 1))
return done(1)
)lua"},
    // ARGV[4] key, ARGV[5] operand, ARGV[6] 'add' | 'min' | 'max', ARGV[7] 'i' | 'f',
    // ARGV[8], ARGV[9]: the value type's range (integers; '' when HINCRBY's 64-bit check is the
    // range), checked before anything is written.
    {script::map_merge, true, "'=' .. ARGV[4], 'n'", 0, R"lua(
local cur, n = F1, tonumber(F2)
local new
if not cur then
  new = ARGV[5]
  n = n + 1
elseif ARGV[6] == 'add' then
  local a, b = tonumber(cur), tonumber(ARGV[5])
  if ARGV[7] == 'f' then
    new = string.format('%.17g', a + b)
  else
    local x = a + b
    if a > -9007199254740992 and a < 9007199254740992 and b > -9007199254740992 and b < 9007199254740992
       and x > -9007199254740992 and x < 9007199254740992 then
      -- Exact: the range bounds, as doubles, round outward, never in.
      if ARGV[8] ~= '' and (x < tonumber(ARGV[8]) or x > tonumber(ARGV[9])) then
        return redis.error_reply('CPPLESS_RANGE ' .. cur .. ' + ' .. ARGV[5] .. ' is out of range')
      end
      new = string.format('%d', x)
    else
      -- Beyond 2^53: Redis' 64-bit HINCRBY on a scratch field, then an exact range check.
      --[[numeric]]
      redis.call('HSET', K, '~', cur)
      local ok = pcall(redis.call, 'HINCRBY', K, '~', ARGV[5])
      new = redis.call('HGET', K, '~')
      redis.call('HDEL', K, '~')
      if not ok or (ARGV[8] ~= '' and (ncmp(new, ARGV[8], 'i') < 0 or ncmp(new, ARGV[9], 'i') > 0)) then
        return redis.error_reply('CPPLESS_RANGE ' .. cur .. ' + ' .. ARGV[5] .. ' is out of range')
      end
    end
  end
else
  --[[numeric]]
  local c = ncmp(ARGV[5], cur, ARGV[7])
  if (ARGV[6] == 'min' and c < 0) or (ARGV[6] == 'max' and c > 0) then new = ARGV[5] else new = cur end
end
redis.call('HSET', K, '=' .. ARGV[4], new, 'n', tostring(n))
return done(new)
)lua"},
    {script::map_size, false, "'n'", 0, R"lua(
return {tonumber(F1)}
)lua"},
    {script::queue_push, true, "", 0, R"lua(
local len = redis.call('RPUSH', K .. '\31l', ARGV[4])
return done(len)
)lua"},
    // The non-blocking half of pop: take the head if there is one.
    {script::queue_pop, true, "", 0, R"lua(
local item = redis.call('LPOP', K .. '\31l')
if item then return done(1, item) end
return {0}
)lua"},
    {script::queue_size, false, "", 0, R"lua(
return {redis.call('LLEN', K .. '\31l')}
)lua"},
    // Every entry at one instant: {key1, value1, key2, value2, ...}.
    {script::map_entries, false, "", 0, R"lua(
local all, out = redis.call('HGETALL', K), {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 1) == '=' then
    out[#out + 1] = string.sub(all[i], 2)
    out[#out + 1] = all[i + 1]
  end
end
return out
)lua"},
    // One step of a cursor: ARGV[4] cursor, ARGV[5] count. {next cursor, key1, value1, ...}; an
    // entry present for the whole iteration is returned at least once (HSCAN's guarantee).
    {script::map_scan, false, "", 0, R"lua(
local r = redis.call('HSCAN', K, ARGV[4], 'MATCH', '=*', 'COUNT', tonumber(ARGV[5]))
local out = {r[1]}
for i = 1, #r[2], 2 do
  out[#out + 1] = string.sub(r[2][i], 2)
  out[#out + 1] = r[2][i + 1]
end
return out
)lua"},
    // Lists: items in K\31l. ARGV[4] 'l' or 'r' (the end), ARGV[5] the item.
    {script::list_push, true, "", 0, R"lua(
local cmd = 'RPUSH'
if ARGV[4] == 'l' then cmd = 'LPUSH' end
return done(redis.call(cmd, K .. '\31l', ARGV[5]))
)lua"},
    {script::list_pop, true, "", 0, R"lua(
local cmd = 'RPOP'
if ARGV[4] == 'l' then cmd = 'LPOP' end
local item = redis.call(cmd, K .. '\31l')
if item then return done(1, item) end
return done(0)
)lua"},
    {script::list_get, false, "", 0, R"lua(
local item = redis.call('LINDEX', K .. '\31l', ARGV[4])
if item then return {1, item} end
return {0}
)lua"},
    // ARGV[4] index (negative: from the end), ARGV[5] the item.
    {script::list_set, true, "", 0, R"lua(
local list = K .. '\31l'
local n, i = redis.call('LLEN', list), tonumber(ARGV[4])
if i < 0 then i = n + i end
if i < 0 or i >= n then return redis.error_reply('CPPLESS_INDEX index ' .. ARGV[4] .. ' of a list of ' .. n) end
redis.call('LSET', list, i, ARGV[5])
return done(1)
)lua"},
    {script::list_range, false, "", 0, R"lua(
return redis.call('LRANGE', K .. '\31l', ARGV[4], ARGV[5])
)lua"},
    {script::list_size, false, "", 0, R"lua(
return {redis.call('LLEN', K .. '\31l')}
)lua"},
    // Byte arrays: 'size' in the hash, the bytes in the string K\31b (grown as written; bytes
    // never written read as 0). ARGV[4] the index, checked against the size.
    {script::bytes_get, false, "'size'", h_index, R"lua(
return {redis.call('BITFIELD_RO', K .. '\31b', 'GET', 'u8', '#' .. ARGV[4])[1]}
)lua"},
    {script::bytes_set, true, "'size'", h_index, R"lua(
return done(redis.call('BITFIELD', K .. '\31b', 'SET', 'u8', '#' .. ARGV[4], ARGV[5])[1])
)lua"},
    // Adds ARGV[5] (may be negative), wrapping modulo 256; returns the new value.
    {script::bytes_add, true, "'size'", h_index, R"lua(
return done(redis.call('BITFIELD', K .. '\31b', 'OVERFLOW', 'WRAP', 'INCRBY', 'u8', '#' .. ARGV[4], ARGV[5])[1])
)lua"},
    {script::bytes_cas, true, "'size'", h_index, R"lua(
local b = K .. '\31b'
local cur = redis.call('BITFIELD', b, 'GET', 'u8', '#' .. ARGV[4])[1]
if cur == tonumber(ARGV[5]) then
  redis.call('BITFIELD', b, 'SET', 'u8', '#' .. ARGV[4], ARGV[6])
  return done(1, cur)
end
return done(0, cur)
)lua"},
    {script::bytes_all, false, "'size'", 0, R"lua(
return {tonumber(F1), redis.call('GET', K .. '\31b') or ''}
)lua"},
}};

// Waiting for a one-time event (a latch reaching zero, a future being set): the register and
// withdraw scripts of both are generated from the field that tells and the test that it happened.
struct event_op {
  script register_id, withdraw_id;
  const char* field;     // read as F1
  const char* happened;  // Lua condition on F1
};
const std::array<event_op, 2> event_ops = {{
    {script::latch_register, script::latch_withdraw, "'count'", "F1 == '0'"},
    {script::future_register, script::future_withdraw, "'has'", "F1 == '1'"},
}};

// Returns 1 if the event happened, else registers the caller as a waiter and returns 0.
std::string register_body(const event_op& e) {
  return std::string("if ") + e.happened + " then return done(1) end\nwait_register()\nreturn done(0)\n";
}
// Leaves the waiters; returns 1 if the event happened meanwhile.
std::string withdraw_body(const event_op& e) {
  return std::string("wait_withdraw()\nif ") + e.happened + " then return done(1) end\nreturn done(0)\n";
}

// The text of one operation's script: the common prologue, the helpers it asks for, its body.
std::string compose(bool mutating, std::string_view fields_in, unsigned helpers, std::string_view body_in) {
  std::string body = "local K, KIND, CID, SEQ = KEYS[1], ARGV[1], ARGV[2], ARGV[3]\n";
  if (mutating) body += "local RECORD_TTL = " + std::to_string(record_ttl.count()) + "\n";
  std::string fields(fields_in);
  if (!fields.empty()) fields = ", " + fields;
  body += "local got = redis.call('HMGET', K, '_k'" + fields + ")\n";
  body += check_kind;
  if (mutating) body += check_call;
  // F1, F2, ...: the fields, in the order asked for.
  int count = fields.empty() ? 0 : 1;
  int depth = 0;
  for (char c : fields_in) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) ++count;
  }
  for (int i = 0; i < count; ++i) body += "local F" + std::to_string(i + 1) + " = got[" + std::to_string(2 + i) + "]\n";
  if (helpers & h_numeric) body += numeric;
  if (helpers & h_tokens) body += tokens;
  if (helpers & h_int) body += exact_int;
  if (helpers & h_waiters) body += waiters;
  if (helpers & h_index) body += index_check;
  // --[[numeric]] in a body: the comparison helper, defined only on the branch that needs it
  // (a closure made on every call costs a little on the hot path).
  std::string text(body_in);
  for (std::size_t at; (at = text.find("--[[numeric]]")) != std::string::npos;) text.replace(at, 13, numeric);
  return body + text;
}

std::array<script_source, static_cast<std::size_t>(script::count_)> build() {
  std::array<script_source, static_cast<std::size_t>(script::count_)> all;
  auto at = [&](script id) -> std::string& { return all[static_cast<std::size_t>(id)].body; };
  at(script::open) = open_body;
  for (const op& o : ops) at(o.id) = compose(o.mutating, o.fields, o.helpers, o.body);
  for (const event_op& e : event_ops) {
    at(e.register_id) = compose(true, e.field, h_waiters, register_body(e));
    at(e.withdraw_id) = compose(true, e.field, h_waiters, withdraw_body(e));
  }
  for (auto& s : all) {
    if (s.body.empty()) throw std::logic_error("cppless::shared: a script without a body (scripts.cpp is incomplete)");
    s.sha = sha1_hex(s.body);
  }
  return all;
}

}  // namespace

std::string wrap_user_operation(std::string_view body, bool changes) {
  std::string out = "local K, KIND, CID, SEQ = KEYS[1], ARGV[1], ARGV[2], ARGV[3]\n";
  if (changes) out += "local RECORD_TTL = " + std::to_string(record_ttl.count()) + "\n";
  out += "local got = redis.call('HMGET', K, '_k')\n";
  out += check_kind;
  if (changes) out += check_call;
  out += R"lua(
local ARGS = {}
for i = 4, #ARGV do ARGS[#ARGS + 1] = ARGV[i] end
)lua";
  if (changes) out += "local saved = redis.call('DUMP', K)\n";
  out += "local ok, result = pcall(function()\n";
  out += body;
  out += "\nend)\n";
  out += R"lua(
if not ok then
)lua";
  if (changes) out += "  redis.call('RESTORE', K, 0, saved, 'REPLACE')\n";
  out += R"lua(  if type(result) == 'table' then result = result.err or 'error' end
  return redis.error_reply('CPPLESS_USER ' .. tostring(result))
end
if type(result) == 'boolean' then result = result and 1 or 0 end
if type(result) == 'number' and result ~= math.floor(result) then result = tostring(result) end
if type(result) == 'table' then return redis.error_reply('CPPLESS_USER returned a table (return a string, a number or nothing)') end
)lua";
  out += changes ? "return done(result)\n" : "return {result}\n";
  return out;
}

const script_source& source_of(script s) {
  static const auto all = build();
  return all[static_cast<std::size_t>(s)];
}

}  // namespace cppless::shared::detail
