-- Delete a lock only while its owner token is still the one stored (an expired lock may be
-- another's now).
-- KEYS: 1 the lock. ARGV: 1 the owner token.
-- Returns 1 when deleted, nil otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
