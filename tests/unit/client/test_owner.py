"""Who a client is: the Redis ACL user its URL logs in as, else the OS user; and the one-line
refusal of steering another user's job without force."""

from __future__ import annotations

import pytest

from evalq.client.owner import NotYourJob, check_owner, current_user, redis_user


def test_the_redis_user_of_a_url_is_the_owner_before_the_os_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USER", "carol")  # what getpass reads first that is set
    assert redis_user("redis://alice:pw@127.0.0.1:6379/0") == "alice"
    assert redis_user("rediss://team%40eu:pw@redis.internal:6380/0") == "team@eu"
    assert current_user("redis://alice:pw@127.0.0.1:6379/0") == "alice"
    # No user, a password only (requirepass), or Redis's own `default`: the OS user.
    for url in (
        "redis://127.0.0.1:6379/0",
        "redis://:secret@127.0.0.1:6379/0",
        "redis://default:secret@127.0.0.1:6379/0",
    ):
        assert redis_user(url) is None
        assert current_user(url) == "carol"


def test_another_users_job_is_refused_in_one_line_unless_forced() -> None:
    with pytest.raises(NotYourJob) as refused:
        check_owner("3f2a9c1b7d0e", "alice", "bob", force=False, flag="--force")
    assert str(refused.value) == (
        "job 3f2a9c1b7d0e belongs to alice; you are bob: pass --force to act on it anyway"
    )
    with pytest.raises(NotYourJob, match="pass force=True to act"):
        check_owner("3f2a9c1b7d0e", "alice", "bob", force=False, flag="force=True")
    check_owner("3f2a9c1b7d0e", "alice", "bob", force=True, flag="--force")
    check_owner("3f2a9c1b7d0e", "alice", "alice", force=False, flag="--force")
    check_owner("3f2a9c1b7d0e", None, "bob", force=False, flag="--force")  # stored before owners
