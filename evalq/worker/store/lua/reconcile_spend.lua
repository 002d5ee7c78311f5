-- After a Redis failover: adds back to a job the spend one process counted and Redis no longer
-- holds (evalq.worker.store.tallies), and notes the failover on the job.
-- KEYS: 1 the job hash, 2 the job's spent_by hash.
-- ARGV: 1 ttl_s, 2 the process's tag, 3 the failover's time, 4 the process's unconfirmed calls
-- not yet reported, 5 '1' when the job is active (noted even when nothing was lost), then the
-- process's (counter, total) pairs.
-- With no spent_by at all, nobody can say whether every write of spend was lost or the hash
-- expired: nothing is added (it could count twice), the process's calls are reported as
-- possibly missing, and its totals are written to spent_by, so that they are reported once.
-- Returns {1 | -1 job gone, calls restored}.
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then
  return {-1, 0}
end
local known = redis.call('EXISTS', KEYS[2]) == 1
local restored, changed = 0, false
local unconfirmed = tonumber(ARGV[4])
for i = 6, #ARGV, 2 do
  local field = ARGV[2] .. '/' .. ARGV[i]
  local missing = tonumber(ARGV[i + 1]) - tonumber(redis.call('HGET', KEYS[2], field) or '0')
  if missing > 0 then
    local amount = string.format('%d', missing)
    redis.call('HINCRBY', KEYS[2], field, amount)
    changed = true
    local calls = ARGV[i] == 'judge_calls' or ARGV[i] == 'candidate_calls'
    if known then
      redis.call('HINCRBY', KEYS[1], ARGV[i], amount)
      if calls then
        restored = restored + missing
      end
    elseif calls then
      unconfirmed = unconfirmed + missing
    end
  end
end
if changed or unconfirmed > 0 or ARGV[5] == '1' then
  redis.call('HSETNX', KEYS[1], 'failover_at', ARGV[3])
end
if restored > 0 then
  redis.call('HINCRBY', KEYS[1], 'failover_calls_restored', string.format('%d', restored))
end
if unconfirmed > 0 then
  redis.call('HINCRBY', KEYS[1], 'failover_calls_unconfirmed', string.format('%d', unconfirmed))
end
if changed then
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[1]))
end
return {1, restored}
