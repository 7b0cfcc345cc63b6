"""The Lua scripts app/stores/redis.py runs in Redis (each atomic there): fenced saves and
deletes, taking, renewing and releasing a table's lease, and the rooms waiting for their
second person."""

# The lease of a table (`NS:lease:CODE`, a hash with no expiry): {node, token, beat, at}.
# `token` is the fencing token, from INCR on `NS:fence:CODE`: it only grows, and each taker
# gets a new one. `beat` counts the holder's renewals: another process takes the lease over
# only after watching `beat` stand still for a whole lease by its own clock (app/cluster/
# ownership.py), so time spent with Redis stopped or hung never counts against a holder,
# whatever Redis's clock did meanwhile. `at` (Redis's clock, seconds) only tells expiry
# apart a lease left behind by a process gone for good.

# Every save is conditional on the caller's node and token, inside Redis; a table whose
# stored version is newer than the one offered is never overwritten (a version only grows).
FENCED_SAVE = """
local lease = redis.call('HMGET', KEYS[3], 'node', 'token')
if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
if ARGV[8] ~= '' then
  local stored = tonumber(redis.call('HGET', KEYS[1], 'version'))
  if stored and stored > tonumber(ARGV[8]) then return -1 end
end
redis.call('HSET', KEYS[1], 'snapshot', ARGV[3], 'schema', ARGV[4], 'saved_at', ARGV[5],
           'seen_at', ARGV[6], 'token', ARGV[2], 'version', ARGV[8], 'node', ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
return 1
"""

# The table goes with its lease, its fence and, if it was waiting for players, the entries
# that counted it against its opener (KEYS[5] waiting, KEYS[6] opener).
FENCED_DELETE = """
local lease = redis.call('HMGET', KEYS[3], 'node', 'token')
if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[3])
local address = redis.call('HGET', KEYS[6], ARGV[3])
if address then
  redis.call('ZREM', ARGV[4] .. address, ARGV[3])
  redis.call('HDEL', KEYS[6], ARGV[3])
end
redis.call('ZREM', KEYS[5], ARGV[3])
return 1
"""

# Taking: a new token, if nobody holds the lease, or its holder is this node's own name (a
# process started again under it: what the old one held in memory is gone), or the lease is
# still exactly the one the caller watched stand still (ARGV[2] token, ARGV[3] beat), or its
# holder is the node ARGV[4] whose renewal counter (KEYS[4], `nodes`) is still ARGV[5]: the
# caller watched that node's every renewal stand still for a whole lease. The taker's own
# counter moves on (a lease confirmed now). {token, the process that let the lease go as it
# stopped, KEYS[3], or ''} if taken, else the lease as it is: {0, node, token, beat}.
TAKE = """
local lease = redis.call('HMGET', KEYS[1], 'node', 'token', 'beat')
if lease[1] and lease[1] ~= ARGV[1] and (lease[2] ~= ARGV[2] or lease[3] ~= ARGV[3]) then
  local still = ARGV[4] ~= '' and lease[1] == ARGV[4]
    and redis.call('HGET', KEYS[4], ARGV[4]) == ARGV[5]
  if not still then return {0, lease[1], lease[2], lease[3]} end
end
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'node', ARGV[1], 'token', token, 'beat', 0,
           'at', redis.call('TIME')[1])
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
local left = redis.call('GET', KEYS[3]) or ''
redis.call('DEL', KEYS[3])
return {token, left}
"""

# Renewing: the beat moves on while the lease is still the caller's (node and token), and so
# does the caller's renewal counter (KEYS[4], `nodes`). A lease that is gone (a Redis that
# restarted empty, or lost its last second of writes) is taken back under the same token if
# nobody wrote the table since: it is absent, or its last writer holds this token. 1 if the
# lease is the caller's now, 0 if it is another's.
RENEW = """
local lease = redis.call('HMGET', KEYS[1], 'node', 'token')
if lease[1] then
  if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
  redis.call('HINCRBY', KEYS[1], 'beat', 1)
  redis.call('HSET', KEYS[1], 'at', redis.call('TIME')[1])
  redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
  return 1
end
local writer = redis.call('HGET', KEYS[2], 'token')
if writer and writer ~= ARGV[2] then return 0 end
local fence = tonumber(redis.call('GET', KEYS[3]) or '0')
if fence < tonumber(ARGV[2]) then redis.call('SET', KEYS[3], ARGV[2]) end
redis.call('HSET', KEYS[1], 'node', ARGV[1], 'token', ARGV[2], 'beat', 0,
           'at', redis.call('TIME')[1])
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
return 1
"""

# Releasing (ARGV[3] '1': as the process stops, noted in KEYS[2] for ARGV[4] seconds).
RELEASE = """
local lease = redis.call('HMGET', KEYS[1], 'node', 'token')
if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[3] == '1' then redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[4]) end
return 1
"""

# How long a table let go by a stopping process is remembered as that process's.
LEFT_SECONDS = 600

# Tables nobody was connected to since the cutoff, unless a live process holds their lease
# (renewed within ARGV[5] seconds by Redis's clock: an idle lobby whose people are still
# there is saved rarely, but is not gone).
PURGE = """
local gone = {}
local now = tonumber(redis.call('TIME')[1])
for _, code in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do
  local at = tonumber(redis.call('HGET', ARGV[3] .. code, 'at') or '0')
  if now - at > tonumber(ARGV[5]) then
    redis.call('DEL', ARGV[2] .. code, ARGV[3] .. code, ARGV[4] .. code)
    redis.call('ZREM', KEYS[1], code)
    table.insert(gone, code)
  end
end
return gone
"""


# A new room ARGV[1] (KEYS[1] the address's opened set, KEYS[2] waiting, KEYS[3] opener,
# KEYS[4] the tables' index): 1 and the code recorded; -1 when ARGV[7] tables (> 0) are open
# in the cluster, those someone was at since ARGV[8] (wall clock, as the index scores them);
# 0 when the address ARGV[2] (none: "") holds ARGV[3] open rooms already. A code counts
# against its address while it is the address's and its table is open (stored and seen
# since ARGV[8]), or being written (recorded less than ARGV[6] s ago): until it closes,
# used or not. The new code goes into the index at once (ARGV[9], now), so that rooms
# opened together all count: its table is written just after (a table never written is
# closed by `close_unopened`).
OPEN_WAITING = """
local now = tonumber(redis.call('TIME')[1])
local most = tonumber(ARGV[7])
if most > 0 and redis.call('ZCOUNT', KEYS[4], ARGV[8], '+inf') >= most then return -1 end
if ARGV[2] ~= '' then
  local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  local held = 0
  for i = 1, #entries, 2 do
    local code, at = entries[i], tonumber(entries[i + 1])
    local seen = tonumber(redis.call('ZSCORE', KEYS[4], code) or '-1')
    if redis.call('HGET', KEYS[3], code) == ARGV[2]
       and (now - at < tonumber(ARGV[6])
            or (redis.call('EXISTS', ARGV[5] .. code) == 1 and seen >= tonumber(ARGV[8])))
    then held = held + 1 else redis.call('ZREM', KEYS[1], code) end
  end
  if held >= tonumber(ARGV[3]) then return 0 end
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[9], ARGV[1])
return 1
"""

# Two people came to the room ARGV[1] (KEYS[1] waiting): no longer waiting for players (it
# still counts against its opener until it closes).
WAITED = """
return redis.call('ZREM', KEYS[1], ARGV[1])
"""

# Waiting rooms due a look (KEYS[1] waiting, KEYS[2] opener, KEYS[3] the tables' index): one
# that a live process serves (its lease renewed within ARGV[5] s) closes by its own timer,
# and is looked at again in ARGV[6] s; any other is closed: its table, lease and fence go
# (a table nobody opened in time, or whose process is gone), and so do its entries. The
# codes whose table went; at most 100 a call (the rest at the next).
CLOSE_UNOPENED = """
local now = tonumber(redis.call('TIME')[1])
local closed = {}
for _, code in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)) do
  local stored = redis.call('EXISTS', ARGV[1] .. code) == 1
  local at = tonumber(redis.call('HGET', ARGV[2] .. code, 'at') or '0')
  if stored and now - at <= tonumber(ARGV[5]) then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[6]), code)
  else
    if stored then table.insert(closed, code) end
    redis.call('DEL', ARGV[1] .. code, ARGV[2] .. code, ARGV[3] .. code)
    redis.call('ZREM', KEYS[3], code)
    local address = redis.call('HGET', KEYS[2], code)
    if address then redis.call('ZREM', ARGV[4] .. address, code) end
    redis.call('HDEL', KEYS[2], code)
    redis.call('ZREM', KEYS[1], code)
  end
end
return closed
"""
