-- Hands free turns to the rows of running jobs, in one atomic step (evalq.worker.dispatch.turns explains the
-- rules): the cluster-wide window minus the rows holding a turn is what is free; each free turn
-- goes to the job of the best tier (high, normal, low) that has rows waiting and room under its
-- max_in_flight, and within a tier to the one holding fewest turns (the older on a tie).
-- A row given a turn moves from the job's waiting list to its turns set and gets a sign of life
-- now, so the watchdog drives it again if its message is lost before a worker takes it.
-- Jobs that are gone, not running, or have nothing waiting or held leave the turns set; resume
-- puts a job back.
-- KEYS: 1 the turns set (job -> created_at), 2 the workers' registrations, 3 their shares.
-- ARGV: 1 the window (0: the live workers' shares added up), 2 the least window, 3 now, 4 ttl_s
-- for a job whose hash holds none (each job's own, its hash's ttl_s field, is used), 5 most
-- turns to hand out in this call; then, for each job key it names (the job's hash, its rows
-- holding a turn, its waiting rows, its activity), the text before and after a job's id in
-- that key (evalq.worker.store.keys spells them: the jobs are found here, so their keys can't be KEYS).
-- Returns {window, held, waiting, job1, line1, job2, line2, ...}: waiting counts the rows
-- still in line after this call that a free turn could go to (their job under its cap), so a
-- worker knows whether the window holds work back.
local now = tonumber(ARGV[3])
local window = tonumber(ARGV[1])
if window <= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local live = redis.call('ZRANGE', KEYS[2], 0, -1)
  local shares = 0
  if #live > 0 then
    for _, n in ipairs(redis.call('HMGET', KEYS[3], unpack(live))) do
      shares = shares + (tonumber(n) or 0)
    end
  end
  window = math.max(tonumber(ARGV[2]), shares)
end
local tiers = {high = 0, normal = 1, low = 2}
local ttl = tonumber(ARGV[4])
local function key(at, job)
  return ARGV[at] .. job .. ARGV[at + 1]
end
local HASH, TURNS, WAITING, ACTIVITY = 6, 8, 10, 12
local held, open = 0, {}
for _, job in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local f = redis.call('HMGET', key(HASH, job), 'status', 'priority', 'max_in_flight', 'ttl_s')
  local holding = redis.call('SCARD', key(TURNS, job))
  local waiting = redis.call('LLEN', key(WAITING, job))
  if f[1] ~= 'running' or (holding == 0 and waiting == 0) then
    redis.call('ZREM', KEYS[1], job)
  else
    held = held + holding
    if waiting > 0 then
      table.insert(open, {
        job = job, tier = tiers[f[2]] or 1, holding = holding, waiting = waiting,
        cap = tonumber(f[3]) or 0, ttl = tonumber(f[4]) or ttl
      })
    end
  end
end
local out = {window, held, 0}
local free = math.min(window - held, tonumber(ARGV[5]))
while free > 0 do
  local best = nil
  for _, j in ipairs(open) do
    if j.waiting > 0 and (j.cap <= 0 or j.holding < j.cap) then
      if best == nil or j.tier < best.tier or (j.tier == best.tier and j.holding < best.holding) then
        best = j
      end
    end
  end
  if best == nil then
    break
  end
  local line = redis.call('LPOP', key(WAITING, best.job))
  if not line then
    best.waiting = 0
  else
    local turns, activity = key(TURNS, best.job), key(ACTIVITY, best.job)
    redis.call('SADD', turns, line)
    redis.call('EXPIRE', turns, best.ttl)
    redis.call('ZADD', activity, now, line)
    redis.call('EXPIRE', activity, best.ttl)
    best.holding = best.holding + 1
    best.waiting = best.waiting - 1
    free = free - 1
    table.insert(out, best.job)
    table.insert(out, line)
  end
end
local left = 0
for _, j in ipairs(open) do
  if j.waiting > 0 and (j.cap <= 0 or j.holding < j.cap) then
    left = left + j.waiting
  end
end
out[3] = left
return out
