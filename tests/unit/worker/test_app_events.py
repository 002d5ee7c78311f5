"""Celery's per-task bookkeeping is chosen by settings: the STARTED state is off unless asked
for (nothing of evalq reads it), Flower's task events are on unless turned off, and the
"task-sent" event only when asked for as well."""

from __future__ import annotations

import pytest

from worker.app import create_app
from worker.settings import Settings


def test_started_state_off_and_flower_events_on_by_default() -> None:
    conf = create_app(Settings()).conf
    assert conf.task_track_started is False
    assert (conf.worker_send_task_events, conf.task_send_sent_event) == (True, False)


def test_sent_events_need_task_events() -> None:
    on = create_app(Settings(task_sent_events=True)).conf
    assert (on.worker_send_task_events, on.task_send_sent_event) == (True, True)
    off = create_app(Settings(task_sent_events=True, task_events=False)).conf
    assert (off.worker_send_task_events, off.task_send_sent_event) == (False, False)


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
    from worker.task_events import TaskEventBatches

    for flush_s in (0.5, 0.0):
        steps = create_app(Settings(task_event_flush_s=flush_s)).steps["consumer"]
        (step,) = [s for s in steps if issubclass(s, TaskEventBatches)]
        assert step.flush_s == flush_s
