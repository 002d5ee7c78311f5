"""Celery's per-task bookkeeping is chosen by settings: the STARTED state is off unless asked
for (nothing of evalq reads it), Flower's task events are on unless turned off, and the
"task-sent" event only when asked for as well, and then from workers only."""

from __future__ import annotations

import pytest

from evalq.worker.celery_app.app import create_app, send_sent_events
from evalq.worker.settings import Settings


def test_started_state_off_and_flower_events_on_by_default() -> None:
    conf = create_app(Settings()).conf
    assert conf.task_track_started is False
    assert (conf.worker_send_task_events, conf.task_send_sent_event) == (True, False)


def test_sent_events_need_task_events_and_come_from_workers_only() -> None:
    """A worker turns the "task-sent" event on as it starts (send_sent_events); the app a client
    builds never publishes it: producers hold no pub/sub permission (evalq-users.acl)."""
    settings = Settings(task_sent_events=True)
    app = create_app(settings)
    assert (app.conf.worker_send_task_events, app.conf.task_send_sent_event) == (True, False)
    send_sent_events(app, settings)
    assert app.conf.task_send_sent_event is True
    settings = Settings(task_sent_events=True, task_events=False)
    off = create_app(settings)
    send_sent_events(off, settings)
    assert (off.conf.worker_send_task_events, off.conf.task_send_sent_event) == (False, False)


def test_a_worker_starting_turns_sent_events_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalq.worker.celery_app.app

    monkeypatch.setenv("EVALQ_TASK_SENT_EVENTS", "true")
    app = create_app(Settings())
    monkeypatch.setattr(evalq.worker.celery_app.app, "get_app", lambda: app)
    monkeypatch.setattr(
        evalq.worker.celery_app.app, "get_settings", Settings
    )  # the environment, read now
    assert app.conf.task_send_sent_event is False
    evalq.worker.celery_app.app._workers_send_sent_events()  # connected to Celery's worker_init
    assert app.conf.task_send_sent_event is True


def test_settings_turn_each_one_the_other_way() -> None:
    conf = create_app(Settings(task_track_started=True, task_events=False)).conf
    assert conf.task_track_started is True
    assert (conf.worker_send_task_events, conf.task_send_sent_event) == (False, False)


def test_the_environment_names_them_with_the_evalq_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALQ_TASK_EVENTS", "false")
    monkeypatch.setenv("EVALQ_TASK_TRACK_STARTED", "true")
    monkeypatch.setenv("EVALQ_TASK_SENT_EVENTS", "true")
    settings = Settings()
    assert (settings.task_events, settings.task_track_started) == (False, True)
    assert settings.task_sent_events is True


def test_the_app_batches_task_events_at_the_settings_interval() -> None:
    from evalq.worker.celery_app.task_events import TaskEventBatches

    for flush_s in (0.5, 0.0):
        steps = create_app(Settings(task_event_flush_s=flush_s)).steps["consumer"]
        (step,) = [s for s in steps if issubclass(s, TaskEventBatches)]
        assert step.flush_s == flush_s
