"""A worker outlives a Redis restart: giving unacknowledged messages back may fail while the
broker connection is torn down, and that failure must not end the worker.

When Redis goes away, Celery's consumer first collects the broken connection (which detaches
kombu's transport from it) and then closes it; closing the channel gives the messages it had
delivered back to their queue. If the collect left the channel open, that give-back runs on a
transport with no connection details left and kombu raises `'NoneType' object has no attribute
'hostname'`; Celery, which ignores only connection errors there, takes it as unrecoverable and
the worker exits for good (reproduced by restarting Redis under a gevent worker; see
tests/integration/test_broker_restart.py).

Nothing is lost by not giving the messages back then: kombu's Redis transport keeps every
delivered, unacknowledged message in Redis (its unacked hash) until it is acknowledged, and
workers put such messages back on their queue once the visibility timeout has passed. So a
failed give-back at teardown is logged, with what happens to the messages, and the worker goes
on to reconnect.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

logger = logging.getLogger(__name__)

_MARK = "_evalq_teardown_guard"


def guard_restore_at_teardown() -> None:
    """Make kombu's Redis QoS survive a failed give-back (idempotent; call before the
    consumer connects, since each QoS binds the method when it is made)."""
    from kombu.transport import redis as kombu_redis

    qos_class: Any = kombu_redis.QoS
    original = qos_class.restore_unacked_once
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def restore_unacked_once(self: Any, stderr: Any = None) -> Any:
        held = len(getattr(self, "_delivered", None) or ())
        try:
            return original(self, stderr)
        except Exception as exc:  # any failure here would end the worker
            logger.warning(
                "evalq: could not give %d unacknowledged message(s) back to the queue while "
                "the broker connection closed (%r); they stay in Redis's unacked set and return "
                "to their queue after the visibility timeout (EVALQ_VISIBILITY_TIMEOUT_S). "
                "The worker reconnects.",
                held,
                exc,
            )
            return None

    setattr(restore_unacked_once, _MARK, True)
    qos_class.restore_unacked_once = restore_unacked_once
