"""A command that timed out is not sent again by the Store's client. Redis runs the copy it was
sent once it gets to it, and a counter (add_counters.lua) is not idempotent, so a resent one
would count a call twice: callers retry whole idempotent steps instead. redis-py's Retry
resends a timed-out command by default (its TimeoutError is among the errors it retries, and
retry_on_timeout=False is deprecated), which is what the Store's client turns off.

A private redis-server kept busy by a script on another connection: the Store's command waits
in the server's socket past the client's timeout, and runs once the script ends; a resend on a
new connection, its handshake answered after the script, would run as well."""

from __future__ import annotations

import threading

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from devtools.local import RedisServer, wait_for
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.support.scratch import plant_job

# Keeps Redis busy for ARGV[1] microseconds: longer than one try of the Store's command
# (a socket timeout), shorter than Redis's own script time limit (5 s).
_BUSY = """
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start > tonumber(ARGV[1])
return 1
"""


def test_a_counter_that_timed_out_on_a_busy_redis_is_counted_once(
    private_redis: RedisServer,
) -> None:
    timeout_s = 0.3
    store = Store.from_settings(
        Settings(redis_url=private_redis.url, redis_socket_timeout_s=timeout_s)
    )
    job = plant_job(store, 1)
    store.incr(job, judge_calls=1)  # the script is loaded: the call below is one EVALSHA
    busy_client = private_redis.client()
    busy = threading.Thread(target=busy_client.eval, args=(_BUSY, 0, int(4 * timeout_s * 1e6)))
    busy.start()
    probe = redis.Redis.from_url(
        private_redis.url, socket_timeout=0.05, retry=Retry(NoBackoff(), 0)
    )
    wait_for(lambda: _busy(probe), 30, "Redis to run the busy script")
    with pytest.raises(redis.TimeoutError):
        store.incr(job, judge_calls=1)
    busy.join()
    # Redis closes a connection its client gave up on only once it has run what it was sent on
    # it: with the checker's and the busy client's the only ones left (the probe's was dropped),
    # every copy has run.
    checker = private_redis.client()
    wait_for(lambda: len(checker.client_list()) <= 2, 30, "the abandoned connections to close")
    assert store.counters(job).judge_calls == 2


def _busy(probe: redis.Redis) -> bool:
    """Whether Redis is inside the script: a quick command times out then (the probe's
    connection is dropped, not retried)."""
    try:
        probe.ping()
    except redis.TimeoutError:
        return True
    return False
