// The Lua scripts behind every operation. Each runs atomically inside Redis, so each operation is
// linearizable and costs one round trip.
//
// Conventions (all scripts but `open`):
//   KEYS[1] = the object's key (a hash: _k kind, _n readable name, then the object's fields)
//   KEYS[2] = the namespace's call-record hash (client id -> "seq:" .. msgpack(result))
//   ARGV[1] = the kind the caller expects, ARGV[2] = client id ('' for read-only calls),
//   ARGV[3] = sequence number, ARGV[4..] = the operation's arguments.
// Auxiliary values live under KEYS[1] .. '\31' .. suffix (wake-up lists, map entries, queue items).
// Scripts return arrays of strings and integers only (never Lua numbers with fractions: those
// would be truncated), so a recorded result replays exactly.
#include "scripts.hpp"

#include "sha1.hpp"

#include <array>

namespace cppless::shared::detail {
namespace {

// Exactly-once: a retry of the last call of a client returns what the first attempt returned; an
// older call (a stray duplicate that arrives late) is refused. Then the kind check: never read an
// object as something else.
constexpr const char* prelude = R"lua(
local K, CALLS = KEYS[1], KEYS[2]
local KIND, CID, SEQ = ARGV[1], ARGV[2], ARGV[3]
if CID ~= '' then
  local rec = redis.call('HGET', CALLS, CID)
  if rec then
    local p = string.find(rec, ':', 1, true)
    local last, s = tonumber(string.sub(rec, 1, p - 1)), tonumber(SEQ)
    if s == last then return cmsgpack.unpack(string.sub(rec, p + 1)) end
    if s < last then return redis.error_reply('CPPLESS_STALE call ' .. SEQ .. ' of client ' .. CID .. ' precedes ' .. last) end
  end
end
local function done(r)
  if CID ~= '' then redis.call('HSET', CALLS, CID, SEQ .. ':' .. cmsgpack.pack(r)) end
  return r
end
local found = redis.call('HGET', K, '_k')
if not found then return redis.error_reply('CPPLESS_MISSING') end
if found ~= KIND then return redis.error_reply('CPPLESS_TYPE ' .. (redis.call('HGET', K, '_n') or found)) end
)lua";

// Numbers in hashes are decimal text. Integers compare exactly (Lua numbers are doubles, exact
// only to 2^53; and Lua's string < uses strcoll, so compare bytes): canonical decimal strings
// (no leading zeros, no "-0") order by sign, then length, then digits.
constexpr const char* numeric = R"lua(
local function icmp(a, b)
  local na, nb = string.byte(a, 1) == 45, string.byte(b, 1) == 45
  if na ~= nb then if na then return -1 else return 1 end end
  local r = 0
  if #a ~= #b then
    if #a < #b then r = -1 else r = 1 end
  else
    for i = 1, #a do
      local x, y = string.byte(a, i), string.byte(b, i)
      if x ~= y then
        if x < y then r = -1 else r = 1 end
        break
      end
    end
  end
  if na then return -r end
  return r
end
local function ncmp(a, b, class)
  if class == 'i' then return icmp(a, b) end
  local x, y = tonumber(a), tonumber(b)
  if x < y then return -1 elseif x > y then return 1 end
  return 0
end
)lua";

// Wake-up tokens: a waiter that must block registers (wt += 1) in the same script that found it
// must wait, and BLPOPs the object's wake list; whoever releases waiters pushes one token per
// registered waiter. Tokens stay in the list until taken, so no wake-up is lost between the
// check and the BLPOP. Lists expire, so tokens of waiters that left are garbage-collected.
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
local function wake_all(list)
  local wt = tonumber(redis.call('HGET', K, 'wt') or '0')
  if wt > 0 then
    push_tokens(list, wt)
    redis.call('HSET', K, 'wt', 0)
  end
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

struct op {
  script id;
  bool numeric = false;
  bool tokens = false;
  const char* body;
};

// The operations. Fields: counter {v}; atomic {v}; best {v, p, has}; barrier {parties, arrived,
// gen}; latch {count, wt}; semaphore {permits, wt}; future {has, v, wt}; map entries in K\31e;
// queue items in K\31l, the item a blocking pop moved in K\31p<client>.
const std::array<op, static_cast<std::size_t>(script::count_) - 1> ops = {{
    {script::counter_add, false, false, R"lua(
redis.call('HINCRBY', K, 'v', ARGV[4])
return done({redis.call('HGET', K, 'v')})
)lua"},
    {script::counter_get, false, false, R"lua(
return {redis.call('HGET', K, 'v')}
)lua"},
    {script::counter_set, false, false, R"lua(
local old = redis.call('HGET', K, 'v')
redis.call('HSET', K, 'v', ARGV[4])
return done({old})
)lua"},
    {script::atomic_load, false, false, R"lua(
return {redis.call('HGET', K, 'v')}
)lua"},
    {script::atomic_store, false, false, R"lua(
redis.call('HSET', K, 'v', ARGV[4])
return done({1})
)lua"},
    {script::atomic_exchange, false, false, R"lua(
local old = redis.call('HGET', K, 'v')
redis.call('HSET', K, 'v', ARGV[4])
return done({old})
)lua"},
    {script::atomic_cas, false, false, R"lua(
local cur = redis.call('HGET', K, 'v')
if cur == ARGV[4] then
  redis.call('HSET', K, 'v', ARGV[5])
  return done({1, cur})
end
return done({0, cur})
)lua"},
    // ARGV[4] value, ARGV[5] payload, ARGV[6] 'i' or 'f', ARGV[7] 'max' or 'min'.
    {script::best_offer, true, false, R"lua(
local better = redis.call('HGET', K, 'has') ~= '1'
if not better then
  local c = ncmp(ARGV[4], redis.call('HGET', K, 'v'), ARGV[6])
  if ARGV[7] == 'max' then better = c > 0 else better = c < 0 end
end
if better then
  redis.call('HSET', K, 'v', ARGV[4], 'p', ARGV[5], 'has', '1')
  return done({1})
end
return done({0})
)lua"},
    // ARGV[4] '1': with the payload.
    {script::best_get, false, false, R"lua(
if ARGV[4] == '1' then return redis.call('HMGET', K, 'has', 'v', 'p') end
return redis.call('HMGET', K, 'has', 'v')
)lua"},
    // Returns {released?, generation}. The last arrival opens generation g for the others by
    // pushing parties - 1 tokens to K\31w<g>, and starts generation g + 1.
    {script::barrier_arrive, false, true, R"lua(
local parties = tonumber(redis.call('HGET', K, 'parties'))
local gen = redis.call('HGET', K, 'gen')
local n = redis.call('HINCRBY', K, 'arrived', 1)
if n >= parties then
  redis.call('HSET', K, 'arrived', 0, 'gen', tostring(tonumber(gen) + 1))
  if parties > 1 then push_tokens(K .. '\31w' .. gen, parties - 1) end
  return done({1, gen})
end
return done({0, gen})
)lua"},
    // A waiter of generation ARGV[4] gives up: returns 1 if the generation opened meanwhile (the
    // waiter passed after all; its token is taken), or 0 and the arrivals left after withdrawing.
    {script::barrier_withdraw, false, false, R"lua(
if redis.call('HGET', K, 'gen') == ARGV[4] then
  return done({0, redis.call('HINCRBY', K, 'arrived', -1)})
end
redis.call('LPOP', K .. '\31w' .. ARGV[4])
return done({1})
)lua"},
    {script::barrier_check, false, false, R"lua(
if redis.call('HGET', K, 'gen') == ARGV[4] then
  return {0, tonumber(redis.call('HGET', K, 'arrived'))}
end
return {1, 0}
)lua"},
    {script::latch_count_down, false, true, R"lua(
local c = tonumber(redis.call('HGET', K, 'count'))
if c > 0 then
  c = math.max(c - tonumber(ARGV[4]), 0)
  redis.call('HSET', K, 'count', tostring(c))
  if c == 0 then wake_all(K .. '\31w') end
end
return done({c})
)lua"},
    // Returns 1 if open, else registers the caller as a waiter and returns 0.
    {script::latch_register, false, false, R"lua(
if redis.call('HGET', K, 'count') == '0' then return done({1}) end
redis.call('HINCRBY', K, 'wt', 1)
return done({0})
)lua"},
    {script::latch_withdraw, false, false, R"lua(
if redis.call('HGET', K, 'count') ~= '0' then
  if tonumber(redis.call('HGET', K, 'wt')) > 0 then redis.call('HINCRBY', K, 'wt', -1) end
  return done({0})
end
redis.call('LPOP', K .. '\31w')
return done({1})
)lua"},
    {script::latch_get, false, false, R"lua(
return {tonumber(redis.call('HGET', K, 'count'))}
)lua"},
    // ARGV[4] permits wanted, ARGV[5] '1': register as a waiter when they are not there.
    {script::sem_acquire, false, false, R"lua(
local p, n = tonumber(redis.call('HGET', K, 'permits')), tonumber(ARGV[4])
if p >= n then
  redis.call('HSET', K, 'permits', tostring(p - n))
  return done({1})
end
if ARGV[5] == '1' then redis.call('HINCRBY', K, 'wt', 1) end
return done({0})
)lua"},
    // A waiter gives up: it takes a token meant for a waiter if there is one, or else leaves
    // the waiter count; then makes one last attempt.
    {script::sem_withdraw, false, false, R"lua(
if not redis.call('LPOP', K .. '\31w') then
  if tonumber(redis.call('HGET', K, 'wt')) > 0 then redis.call('HINCRBY', K, 'wt', -1) end
end
local p, n = tonumber(redis.call('HGET', K, 'permits')), tonumber(ARGV[4])
if p >= n then
  redis.call('HSET', K, 'permits', tostring(p - n))
  return done({1})
end
return done({0})
)lua"},
    // Wakes up to n registered waiters; each retries (the semaphore is not fair).
    {script::sem_release, false, true, R"lua(
local n = tonumber(ARGV[4])
local p = tonumber(redis.call('HGET', K, 'permits')) + n
redis.call('HSET', K, 'permits', tostring(p))
local wt = tonumber(redis.call('HGET', K, 'wt'))
local k = math.min(wt, n)
if k > 0 then
  push_tokens(K .. '\31w', k)
  redis.call('HINCRBY', K, 'wt', -k)
end
return done({p})
)lua"},
    {script::sem_get, false, false, R"lua(
return {tonumber(redis.call('HGET', K, 'permits'))}
)lua"},
    {script::future_set, false, true, R"lua(
if redis.call('HGET', K, 'has') == '1' then return redis.error_reply('CPPLESS_SET') end
redis.call('HSET', K, 'v', ARGV[4], 'has', '1')
wake_all(K .. '\31w')
return done({1})
)lua"},
    {script::future_get, false, false, R"lua(
return redis.call('HMGET', K, 'has', 'v')
)lua"},
    {script::future_register, false, false, R"lua(
if redis.call('HGET', K, 'has') == '1' then return done({1}) end
redis.call('HINCRBY', K, 'wt', 1)
return done({0})
)lua"},
    {script::future_withdraw, false, false, R"lua(
if redis.call('HGET', K, 'has') ~= '1' then
  if tonumber(redis.call('HGET', K, 'wt')) > 0 then redis.call('HINCRBY', K, 'wt', -1) end
  return done({0})
end
redis.call('LPOP', K .. '\31w')
return done({1})
)lua"},
    {script::map_get, false, false, R"lua(
return {redis.call('HGET', K .. '\31e', ARGV[4])}
)lua"},
    {script::map_put, false, false, R"lua(
return done({redis.call('HSET', K .. '\31e', ARGV[4], ARGV[5])})
)lua"},
    {script::map_erase, false, false, R"lua(
return done({redis.call('HDEL', K .. '\31e', ARGV[4])})
)lua"},
    // ARGV[4] key, ARGV[5] operand, ARGV[6] 'add' | 'min' | 'max', ARGV[7] 'i' | 'f',
    // ARGV[8], ARGV[9]: the value type's range (integers), checked before anything is written.
    {script::map_merge, true, false, R"lua(
local E = K .. '\31e'
local cur = redis.call('HGET', E, ARGV[4])
local new
if not cur then
  new = ARGV[5]
elseif ARGV[6] == 'add' then
  if ARGV[7] == 'i' then
    local sum = redis.call('HINCRBY', E, ARGV[4], ARGV[5])
    local s = redis.call('HGET', E, ARGV[4])
    if icmp(s, ARGV[8]) < 0 or icmp(s, ARGV[9]) > 0 then
      redis.call('HSET', E, ARGV[4], cur)
      return redis.error_reply('CPPLESS_RANGE ' .. cur .. ' + ' .. ARGV[5] .. ' is out of range')
    end
    return done({s})
  end
  new = string.format('%.17g', tonumber(cur) + tonumber(ARGV[5]))
elseif ARGV[6] == 'min' then
  if ncmp(ARGV[5], cur, ARGV[7]) < 0 then new = ARGV[5] else new = cur end
else
  if ncmp(ARGV[5], cur, ARGV[7]) > 0 then new = ARGV[5] else new = cur end
end
if new ~= cur then redis.call('HSET', E, ARGV[4], new) end
return done({new})
)lua"},
    {script::map_size, false, false, R"lua(
return {redis.call('HLEN', K .. '\31e')}
)lua"},
    {script::queue_push, false, false, R"lua(
return done({redis.call('RPUSH', K .. '\31l', ARGV[4])})
)lua"},
    // The non-blocking half of pop: forget the item the previous blocking pop of this client
    // moved (it was delivered), then take the head if there is one.
    {script::queue_pop, false, false, R"lua(
redis.call('DEL', K .. '\31p' .. CID)
local item = redis.call('LPOP', K .. '\31l')
if item then return done({1, item}) end
return done({0})
)lua"},
    {script::queue_size, false, false, R"lua(
return {redis.call('LLEN', K .. '\31l')}
)lua"},
}};

std::array<script_source, static_cast<std::size_t>(script::count_)> build() {
  std::array<script_source, static_cast<std::size_t>(script::count_)> all;
  all[static_cast<std::size_t>(script::open)].body = open_body;
  for (const op& o : ops) {
    std::string body = prelude;
    if (o.numeric) body += numeric;
    if (o.tokens) body += tokens;
    body += o.body;
    all[static_cast<std::size_t>(o.id)].body = std::move(body);
  }
  for (auto& s : all) s.sha = sha1_hex(s.body);
  return all;
}

}  // namespace

const script_source& source_of(script s) {
  static const auto all = build();
  return all[static_cast<std::size_t>(s)];
}

}  // namespace cppless::shared::detail
