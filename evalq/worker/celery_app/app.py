"""The Celery app: Redis broker and backend, JSON only, at-least-once delivery, and two
queues whose order makes workers finish rows already started before opening new ones."""

from __future__ import annotations

import logging
import math
import os
from functools import cache
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, worker_init, worker_ready, worker_shutdown

from evalq.worker.celery_app.result_backend import RedisResults, backend_url
from evalq.worker.celery_app.task_events import batching_step
from evalq.worker.dispatch.queues import PREPARE_ROW, QUEUE_QUESTIONS, QUEUE_ROWS, queue_for
from evalq.worker.settings import Settings, get_settings
from evalq.worker.store.redis_tls import tls_options

log = logging.getLogger(__name__)

# The names stay importable from here (`app`, the worker's app, comes from __getattr__).
__all__ = ["PREPARE_ROW", "QUEUE_QUESTIONS", "QUEUE_ROWS", "create_app", "get_app"]


def create_app(settings: Settings) -> Celery:
    app = Celery(
        "evalq",
        broker=settings.redis_url,
        backend=backend_url(settings.redis_url),
        include=["evalq.tasks.rows", "evalq.tasks.batch"],
    )
    # A frozen Redis must give errors that are retried, not hangs: every connection (broker,
    # result backend) times out, and publishing and result writes retry for redis_retry_max_s.
    timeout = settings.redis_socket_timeout_s
    pause_s = 5.0
    attempts = max(1, math.ceil(settings.redis_retry_max_s / (timeout + pause_s)))
    tls = tls_options(settings)
    transport = {
        "visibility_timeout": settings.visibility_timeout_s,
        "queue_order_strategy": "priority",  # consume queues in the order the worker lists them
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "socket_keepalive": True,
        # (re)connecting before a publish: kombu's default gives up after 4 s
        "connect_retries_timeout": settings.redis_retry_max_s,
        "interval_start": 0.2,
        "interval_step": 1.0,
        "interval_max": pause_s,
        # kombu's default is 10: acks from hundreds of greenlets would find no connection
        "max_connections": settings.connection_slots,
    }
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        # A gevent worker polls the broker in Celery's blocking loop: with nothing reserved
        # beyond what runs, a freed slot waits out the poll's 2 s timeout before the next
        # message comes (15x fewer calls/s in scripts/bench --scale). Four per slot keep it fed.
        worker_prefetch_multiplier=4 if settings.worker_pool == "gevent" else 1,
        broker_transport_options=transport,
        result_backend_transport_options={"visibility_timeout": settings.visibility_timeout_s},
        # One backend (one connection pool) per process: Celery otherwise keeps one per thread,
        # and under gevent every task runs in a new greenlet, so each task built a client and
        # opened a connection (a HELLO per task in INFO commandstats). redis-py's pool is safe
        # to share between threads and greenlets.
        result_backend_thread_safe=True,
        redis_socket_timeout=timeout,
        redis_max_connections=settings.connection_slots,
        redis_socket_connect_timeout=timeout,
        result_backend_always_retry=True,
        result_backend_max_retries=attempts,
        result_backend_max_sleep_between_retries_ms=int(pause_s * 1000),
        task_publish_retry=True,
        task_publish_retry_policy={
            "max_retries": attempts,
            "interval_start": 0.2,
            "interval_step": 1.0,
            "interval_max": pause_s,
        },
        broker_connection_retry_on_startup=True,
        # rediss://: the broker and the backend check Redis's certificate as the Store does
        broker_use_ssl=tls or False,
        redis_backend_use_ssl=tls or False,
        result_expires=24 * 3600,
        result_extended=False,
        task_time_limit=settings.task_time_limit_s,
        task_soft_time_limit=max(1, settings.task_time_limit_s - 30),
        task_default_queue=QUEUE_QUESTIONS,
        task_routes={PREPARE_ROW: {"queue": QUEUE_ROWS}},
        task_track_started=settings.task_track_started,
        worker_send_task_events=settings.task_events,  # Flower
        # Flower learns of a task when a worker receives it; the "sent" event (a publish per
        # task sent, from prepare_row) only adds the moment it was queued. Workers turn it on
        # as they start (send_sent_events): a client's app never publishes, since producers
        # hold no pub/sub permission at all (scripts/redis/evalq-users.acl;
        # docs/operations/security.md: Redis users) and may not command workers on Celery's
        # remote-control channel.
        task_send_sent_event=False,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    from evalq.worker.dispatch.pace import stamp_sent

    before_task_publish.connect(stamp_sent, weak=False)  # the waits a worker's pace reads
    app.steps["consumer"].add(batching_step(settings.task_event_flush_s))
    from evalq.worker.celery_app.broker_teardown import GiveBackAfterReconnect

    app.steps["consumer"].add(GiveBackAfterReconnect)
    from evalq.worker.celery_app.own_tasks import OwnTasksOnly

    app.steps["consumer"].add(OwnTasksOnly)  # a queued `celery.*` built-in is never run
    return app


@cache
def get_app() -> Celery:
    """The worker's app (the one tasks register on), built once from the environment on first
    use, never at import: a client given explicit settings needs no valid environment, and a
    bad value is reported to whoever builds the app that uses it."""
    return create_app(get_settings())


def __getattr__(name: str) -> Any:
    # PEP 562: `evalq.worker.celery_app.app.app` (what `celery -A evalq.worker.celery_app.app`
    # looks up) is built when first looked up, not when the module is imported.
    if name == "app":
        return get_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def send_sent_events(app: Celery, settings: Settings) -> None:
    """Celery's "task-sent" event for the tasks this process sends, when the settings ask for
    it (EVALQ_TASK_SENT_EVENTS, with task events on). Only a worker calls this."""
    app.conf.task_send_sent_event = settings.task_events and settings.task_sent_events


@worker_init.connect
def _workers_send_sent_events(sender: Any = None, **_: Any) -> None:
    send_sent_events(get_app(), get_settings())


@worker_init.connect
def _stop_following_results(sender: Any = None, **_: Any) -> None:
    """A worker never waits on a task's result (see evalq.worker.celery_app.result_backend)."""
    backend = get_app().backend
    if isinstance(backend, RedisResults):
        backend.stop_following()


@worker_init.connect
def _survive_broker_restarts(sender: Any = None, **_: Any) -> None:
    """A Redis restart must not end the worker (see evalq.worker.celery_app.broker_teardown); worker_init comes
    before the consumer's first connection, so every channel it opens has the guard."""
    from evalq.worker.celery_app.broker_teardown import guard_restore_at_teardown

    guard_restore_at_teardown()


def _concurrency(consumer: Any) -> int:
    """The worker's task slots (the pool's size), which cap its share of the turns' window."""
    controller = getattr(consumer, "controller", None)
    given = getattr(controller, "concurrency", None) or get_app().conf.worker_concurrency
    return int(given or os.cpu_count() or 1)


_beating: list[Any] = []  # this process's Heartbeat and pace Meter, once the worker is ready


@worker_shutdown.connect
def _leave(sender: Any = None, **_: Any) -> None:
    """A worker stopped cleanly (its tasks ended) stops counting as alive at once."""
    while _beating:
        try:
            _beating.pop().unregister()
        except Exception:  # Redis away: the registration lapses by itself
            log.warning("could not take this worker's registration out", exc_info=True)


@worker_ready.connect
def _start_watchdog(sender: Any = None, **_: Any) -> None:
    """Each worker runs the watchdog thread; a Redis lock lets one of them sweep at a time.
    Its heartbeat keeps the rows of its running tasks from looking stalled."""
    from evalq.worker.dispatch.heartbeat import Heartbeat, interval_for
    from evalq.worker.dispatch.pace import start_pace
    from evalq.worker.dispatch.turns import hand_out
    from evalq.worker.jobs.archiving import Archiver
    from evalq.worker.jobs.watchdog import BatchDriving, Watchdog
    from evalq.worker.lifecycle.job_end import on_job_end
    from evalq.worker.runtime import runtime

    rt = runtime()

    def send(job_id: str, row_id: str) -> None:
        get_app().send_task(PREPARE_ROW, (job_id, row_id), queue=queue_for(PREPARE_ROW))

    def send_batch_step(name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        get_app().send_task(name, args, countdown=countdown_s, queue=queue_for(name))

    name = getattr(sender, "hostname", None) or "worker"
    archiver = Archiver(rt.store, rt.settings, name)
    on_job_end(archiver.write)  # the worker that ends a job writes it to the archive
    meter = start_pace(
        rt.store,
        rt.settings,
        name,
        _concurrency(sender),
        lambda: hand_out(rt.store, rt.settings, send),
    )
    beat = Heartbeat(
        rt.store,
        interval_s=interval_for(rt.settings.stall_timeout_s),
        max_hold_s=rt.settings.task_time_limit_s,
        share=(name, lambda: meter.pace.rows),
    )
    beat.start()
    _beating.append(beat)
    _beating.append(meter)  # stopped first at shutdown, before the heartbeat unregisters
    try:  # rows that waited for a worker to start get their turns now, not at the first sweep
        hand_out(rt.store, rt.settings, send)
    except Exception:
        log.warning("turns: handing out at start failed; the watchdog does it", exc_info=True)
    Watchdog(
        rt.store,
        send,
        interval_s=rt.settings.watchdog_interval_s,
        stall_timeout_s=rt.settings.stall_timeout_s,
        name=name,
        max_redrives=rt.settings.max_redrives,
        batches=BatchDriving(rt.settings, send_batch_step),
        turns=rt.settings,
        archiver=archiver,
    ).start()
