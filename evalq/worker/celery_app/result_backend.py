"""Celery's Redis result backend, without following results in worker processes.

Celery's Redis backend subscribes to a task's result channel when a task is sent (unless the
pool says joins would block, which gevent's does not) and again when a GroupResult is built:
a chord's header builds one. In a gevent worker, prepare_row therefore subscribed to the
channel of every unit it put into a chord, and a greenlet decoded every unit's result message
only to unsubscribe. That is two commands, a message and its decoding per unit, for results
nothing in a worker waits on: the chord counts in Redis, and clients follow progress in the
Store.

So the backend never subscribes when a task is sent, and a worker process turns following off
altogether (`stop_following`, at worker start). Outside workers `AsyncResult.get` works as in
Celery: it subscribes when it starts waiting and reads the stored result first, so a result
stored before then is not missed.
"""

from __future__ import annotations

from typing import Any

from celery.backends.redis import RedisBackend


class RedisResults(RedisBackend):  # type: ignore[misc]
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
