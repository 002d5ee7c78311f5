"""What the worker is running, by delivery tag: the messages the reconnect give-back leaves to
their tasks (evalq.worker.celery_app.broker_teardown.running_tags)."""

from __future__ import annotations

from dataclasses import dataclass

from celery.worker import state

from evalq.worker.celery_app.broker_teardown import running_tags


@dataclass(eq=False)
class Message:
    delivery_tag: str | None


@dataclass(eq=False)
class ActiveRequest:
    message: Message | None


def test_the_tags_of_running_tasks_and_nothing_for_a_request_without_one() -> None:
    held = [ActiveRequest(Message("tag-1")), ActiveRequest(Message(None)), ActiveRequest(None)]
    for request in held:
        state.active_requests.add(request)
    try:
        assert running_tags() == {"tag-1"}
    finally:
        for request in held:
            state.active_requests.discard(request)
    assert running_tags() == set()
