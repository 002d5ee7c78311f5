"""A worker outlives a Redis restart: a channel whose broker connection was torn down fails as
a lost connection, which Celery recovers from, never with an AttributeError, which ends the
worker; what a teardown could not give back is given back on the next connection."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Collection
from typing import Any

import redis
from celery import bootsteps

logger = logging.getLogger(__name__)

_MARK = "_evalq_teardown_guard"

# Delivery tags this process could not give back at a teardown, for its next connection.
_unreturned: set[str] = set()
_unreturned_lock = threading.Lock()


def guard_restore_at_teardown() -> None:
    """Install both guards on kombu's Redis transport (idempotent). Call before the consumer
    connects: each QoS binds its give-back method when it is made.

    Once Celery's consumer collects a broken connection, kombu's transport is detached from it
    (its `client`, then the channel's `connection`, become None), and closing the channel
    (giving its messages back) or a finished task's ack could open a connection from details
    that are gone; Celery takes anything there but a connection error as unrecoverable."""
    from kombu.transport import redis as kombu_redis

    channel_class: Any = kombu_redis.Channel
    if not getattr(channel_class._connparams, _MARK, False):
        channel_class._connparams = _detached_is_disconnected(channel_class._connparams)
    qos_class: Any = kombu_redis.QoS
    if not getattr(qos_class.restore_unacked_once, _MARK, False):
        qos_class.restore_unacked_once = _give_back_or_say_why(qos_class.restore_unacked_once)


def _detached_is_disconnected(original: Any) -> Any:
    """A detached channel raises redis-py's ConnectionError, not `'NoneType' object has no
    attribute 'hostname'` (or `'client'`)."""

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
    """A failed give-back is logged and remembered for the next connection. Nothing is lost:
    kombu keeps every unacknowledged message in Redis's unacked hash, but waiting for the
    visibility timeout (EVALQ_VISIBILITY_TIMEOUT_S) would hold up the rows they carry."""

    @functools.wraps(original)
    def restore_unacked_once(self: Any, stderr: Any = None) -> Any:
        held = [str(tag) for tag in getattr(self, "_delivered", None) or ()]
        try:
            return original(self, stderr)
        except Exception as exc:  # anything but a lost connection here would end the worker
            with _unreturned_lock:
                _unreturned.update(held)
            logger.warning(
                "could not give %d unacknowledged message(s) back to the queue while "
                "the broker connection closed (%r); they stay in Redis's unacked set, and the "
                "worker gives them back once it has reconnected (or they return to their queue "
                "after the visibility timeout, EVALQ_VISIBILITY_TIMEOUT_S).",
                len(held),
                exc,
            )
            return None

    setattr(restore_unacked_once, _MARK, True)
    return restore_unacked_once


def give_back_unreturned(qos: Any, busy: Collection[str] = ()) -> int:
    """Put the messages a teardown could not give back on their queues again, through a live
    channel's QoS (kombu's restore_by_tag: one transaction each, a no-op for a message already
    acknowledged or given back). Messages in `busy` (their tasks still run here) are left to
    their tasks; the watchdog drives a row that still goes quiet. What fails stays remembered
    for the next connection. Returns how many."""
    with _unreturned_lock:
        tags = sorted(_unreturned - set(busy))
        _unreturned.clear()
    for done, tag in enumerate(tags):
        try:
            qos.restore_by_tag(tag)
        except Exception as exc:
            with _unreturned_lock:
                _unreturned.update(tags[done:])
            logger.warning(
                "could not give %d message(s) back after reconnecting (%r); trying again on the "
                "next connection",
                len(tags) - done,
                exc,
            )
            return done
    if tags:
        logger.info("gave %d message(s) back to their queues after reconnecting", len(tags))
    return len(tags)


def running_tags() -> set[str]:
    """The delivery tags of the tasks this worker is running now."""
    from celery.worker import state

    running = set()
    for request in list(state.active_requests):
        tag = getattr(getattr(request, "message", None), "delivery_tag", None)
        if tag is not None:
            running.add(str(tag))
    return running


class GiveBackAfterReconnect(bootsteps.StartStopStep):  # type: ignore[misc]
    """A consumer step: each time the consumer has (re)connected, give back what the last
    teardown could not."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c: Any) -> None:
        if c.connection is None or not _unreturned:
            return
        try:
            give_back_unreturned(c.connection.default_channel.qos, running_tags())
        except Exception:  # never stop the consumer over this: the visibility timeout remains
            logger.warning("giving messages back after reconnecting failed", exc_info=True)
