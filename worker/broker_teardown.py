"""A worker outlives a Redis restart: a channel whose broker connection has been torn down must
fail as a lost connection, which Celery recovers from, never with an AttributeError, which ends
the worker.

When Redis goes away, Celery's consumer collects the broken connection, which detaches kombu's
transport from it (the transport's `client`, and then the channel's `connection`, become None),
and then closes it. Two things can still reach such a channel afterwards and make it open a new
Redis connection from connection details that are gone:

- closing it gives the messages it had delivered back to their queue (when the collect left the
  channel open): kombu raised `'NoneType' object has no attribute 'hostname'`;
- a task that finishes acknowledges its message on the channel it came from (the thread pool's
  event loop runs the ack): `'NoneType' object has no attribute 'client'`.

Celery ignores or logs connection errors at both places but treats anything else as
unrecoverable, and the worker exited for good (reproduced by restarting Redis under a gevent and
a thread worker; see tests/integration/test_broker_restart.py). So a detached channel raises
redis-py's ConnectionError instead, and a failed give-back is logged with what becomes of the
messages.

Nothing is lost either way: kombu's Redis transport keeps every delivered, unacknowledged
message in Redis (its unacked hash) until it is acknowledged, and workers put such messages back
on their queue once the visibility timeout has passed; the watchdog drives a row that went quiet
again sooner (EVALQ_STALL_TIMEOUT_S).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import redis

logger = logging.getLogger(__name__)

_MARK = "_evalq_teardown_guard"


def guard_restore_at_teardown() -> None:
    """Install both guards on kombu's Redis transport (idempotent). Call before the consumer
    connects: each QoS binds its give-back method when it is made."""
    from kombu.transport import redis as kombu_redis

    channel_class: Any = kombu_redis.Channel
    if not getattr(channel_class._connparams, _MARK, False):
        channel_class._connparams = _detached_is_disconnected(channel_class._connparams)
    qos_class: Any = kombu_redis.QoS
    if not getattr(qos_class.restore_unacked_once, _MARK, False):
        qos_class.restore_unacked_once = _give_back_or_say_why(qos_class.restore_unacked_once)


def _detached_is_disconnected(original: Any) -> Any:
    @functools.wraps(original)
    def _connparams(self: Any, *args: Any, **kwargs: Any) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise redis.exceptions.ConnectionError(
                "this broker channel's connection was closed (Redis went away); "
                "the worker reconnects on a new one"
            )
        return original(self, *args, **kwargs)

    setattr(_connparams, _MARK, True)
    return _connparams


def _give_back_or_say_why(original: Any) -> Any:
    @functools.wraps(original)
    def restore_unacked_once(self: Any, stderr: Any = None) -> Any:
        held = len(getattr(self, "_delivered", None) or ())
        try:
            return original(self, stderr)
        except Exception as exc:  # anything but a lost connection here would end the worker
            logger.warning(
                "could not give %d unacknowledged message(s) back to the queue while "
                "the broker connection closed (%r); they stay in Redis's unacked set and return "
                "to their queue after the visibility timeout (EVALQ_VISIBILITY_TIMEOUT_S). "
                "The worker reconnects.",
                held,
                exc,
            )
            return None

    setattr(restore_unacked_once, _MARK, True)
    return restore_unacked_once
