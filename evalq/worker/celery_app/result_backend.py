"""Celery's Redis result backend, without following results in worker processes: nothing in
a worker waits on a task's result (the chord counts in Redis, clients follow the Store)."""

from __future__ import annotations

from typing import Any

from celery.backends.redis import RedisBackend


class RedisResults(RedisBackend):  # type: ignore[misc]
    """Never subscribes when a task is sent, and follows nothing once `stop_following` ran (at
    worker start). Celery's backend subscribes to a result's channel at send and again when a
    GroupResult is built (a chord's header): in a gevent worker each unit of a chord cost two
    commands, a message and its decoding, for a result nobody waits on. Outside workers
    `AsyncResult.get` works as in Celery: it subscribes when it starts waiting and reads the
    stored result first, so a result stored before then is not missed."""

    following = True

    def on_task_call(self, producer: Any, task_id: str) -> None:
        return None

    def add_pending_result(
        self, result: Any, weak: bool = False, start_drainer: bool = True
    ) -> Any:
        if not self.following:
            return result
        return super().add_pending_result(result, weak=weak, start_drainer=start_drainer)

    def wait_for_pending(self, result: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.following:
            raise RuntimeError(
                "an evalq worker does not wait on task results (its tasks chain through chords)"
            )
        return super().wait_for_pending(result, *args, **kwargs)

    def stop_following(self) -> None:
        self.following = False


def backend_url(redis_url: str) -> str:
    """The result backend setting naming this class (Celery's `module:Class+url` form)."""
    return f"{__name__}:{RedisResults.__name__}+{redis_url}"
