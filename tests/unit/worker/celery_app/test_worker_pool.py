"""A worker's pool and what it is sized for: the connection pools must hold every task that
runs at once, or a greenlet past redis-py's or httpx's default of 100 gets an error."""

from __future__ import annotations

from evalq.worker.celery_app.app import create_app
from evalq.worker.judges.gemini import make_client
from evalq.worker.settings import Settings


def test_gevent_is_the_default_with_a_pool_of_hundreds() -> None:
    assert Settings().worker_pool == "gevent"
    assert Settings().concurrency == 200
    assert Settings(worker_pool="threads").concurrency == 16
    assert Settings(worker_pool="threads", worker_concurrency=40).concurrency == 40


def test_every_connection_pool_holds_every_task_at_once() -> None:
    settings = Settings(worker_concurrency=600)
    assert settings.connection_slots > 600
    conf = create_app(settings).conf
    assert conf.broker_transport_options["max_connections"] == settings.connection_slots
    assert conf.redis_max_connections == settings.connection_slots
    http = make_client(settings)._api_client._httpx_client
    assert http._transport._pool._max_connections == settings.connection_slots


def test_the_store_pool_holds_every_task_at_once() -> None:
    from evalq.worker.store import Store

    settings = Settings(worker_concurrency=600)
    store = Store.from_settings(settings)
    assert store.r.connection_pool.max_connections == settings.connection_slots


def test_a_gevent_worker_reserves_ahead_so_freed_slots_are_fed_at_once() -> None:
    """Celery's blocking loop (gevent) polls with a 2 s timeout: with nothing reserved beyond
    the running tasks a freed slot waited that long (scripts/bench --scale: 3.5 calls/s
    instead of 49 at 8 slots and 60 ms latency)."""
    assert create_app(Settings(worker_pool="gevent")).conf.worker_prefetch_multiplier == 4
    assert create_app(Settings(worker_pool="threads")).conf.worker_prefetch_multiplier == 1
