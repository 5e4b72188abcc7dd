"""The Lua scripts :class:`~.task_store_redis.RedisTaskStore` runs in Redis, each one
atomic: a task's creation with the indexes' upkeep, a read with its creator's lease, and
a compare-and-set on a task's revision that publishes the change. Plain text: importing
this module needs no Redis client.

Keys under the store's prefix: ``task:{id}`` (a hash: ``data``, ``rev``, ``worker``),
``expiry`` and ``owner:{owner}`` (sorted sets: by expiry, by creation number), ``seq``
(the creation counter), ``worker:{id}`` (a store's lease). Times are Redis's own.
"""

# The next creation number (a counter kept as long as its tasks). KEYS: counter; ARGV: ttl.
NEXT_SEQ = """
if redis.call('exists', KEYS[1]) == 0 then
  local t = redis.call('time')
  redis.call('set', KEYS[1], t[1] .. string.format('%06d', tonumber(t[2])))
end
local seq = redis.call('incr', KEYS[1])
local ttl = math.max(tonumber(ARGV[1]), 1)
if redis.call('pttl', KEYS[1]) < ttl then redis.call('pexpire', KEYS[1], ttl) end
return seq
"""

# A new task (1) unless the owner has as many as it may (-1) or the store is full (0), once
# expired tasks left the indexes. KEYS: expiry index (members "<owner index>\n<id>"), owner
# index, task, lease; ARGV: max tasks, ttl, lease ms, worker, record, seq, id, max per owner.
CREATE = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('zrangebyscore', KEYS[1], '-inf', now)
for _, member in ipairs(gone) do
  local index, id = string.match(member, '^(.*)\\n([^\\n]*)$')
  if index then redis.call('zrem', index, id) end
end
if #gone > 0 then redis.call('zremrangebyscore', KEYS[1], '-inf', now) end
if redis.call('zcard', KEYS[2]) >= tonumber(ARGV[8]) then return -1 end
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
local ttl, keep = tonumber(ARGV[2]), math.max(tonumber(ARGV[2]), 1)
redis.call('set', KEYS[4], '1', 'px', ARGV[3])
redis.call('hset', KEYS[3], 'data', ARGV[5], 'rev', '0', 'worker', ARGV[4])
redis.call('pexpire', KEYS[3], ttl)
redis.call('zadd', KEYS[1], now + ttl, KEYS[2] .. '\\n' .. ARGV[7])
redis.call('zadd', KEYS[2], ARGV[6], ARGV[7])
for i = 1, 2 do
  if redis.call('pttl', KEYS[i]) < keep then redis.call('pexpire', KEYS[i], keep) end
end
return 1
"""

# The record, its revision and creator, whether its lease holds. KEYS: task; ARGV: leases.
READ = """
local v = redis.call('hmget', KEYS[1], 'data', 'rev', 'worker')
if not v[1] then return false end
local alive = 0
if v[3] then alive = redis.call('exists', ARGV[1] .. v[3]) end
return {v[1], v[2] or '', v[3] or '', alive}
"""

# Write a record if its revision is still the one read (1), else 0; with a lease key, only
# while that lease has lapsed (else -1). KEYS: task[, lease]; ARGV: revision read, new
# revision, record, channel, task id.
CHANGE = """
if redis.call('hget', KEYS[1], 'rev') ~= ARGV[1] then return 0 end
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then return -1 end
redis.call('hset', KEYS[1], 'rev', ARGV[2], 'data', ARGV[3])
redis.call('publish', ARGV[4], ARGV[5])
return 1
"""
