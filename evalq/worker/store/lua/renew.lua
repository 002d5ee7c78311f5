-- Extend each lock this owner still holds (one it lost to expiry is another's now).
-- KEYS: the locks. ARGV: 1 the owner token, 2 the new ttl_s.
-- Returns 0.
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('EXPIRE', key, ARGV[2]) end
end
return 0
