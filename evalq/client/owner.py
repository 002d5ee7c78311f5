"""Who submits a job and who steers one: the owner is recorded at submit, and steering another
user's job is refused unless forced. A guard against mistakes (a wrong id, a shared name), not a
boundary: what a user may do is what the Redis ACL roles let them do."""

from __future__ import annotations

import getpass
from urllib.parse import unquote

from evalq.core.errors import EvalqError
from evalq.core.secret_urls import UrlError, split_url

UNKNOWN = "unknown"  # no Redis user and an OS user getpass can't name (no login, no passwd)


class NotYourJob(EvalqError):
    """Cancel, resume or a change of turns on a job another user submitted, without force."""


def redis_user(redis_url: str) -> str | None:
    """The ACL user a Redis URL logs in as, read as every secret URL is (secret_urls); None
    for Redis's `default` user or no user."""
    try:
        name = unquote(split_url(redis_url, "redis://USER:PASSWORD@HOST").username)
    except UrlError:
        return None
    return name if name and name != "default" else None


def current_user(redis_url: str) -> str:
    """Who this client is, as a job's owner is recorded: the Redis ACL user it logs in as (the
    username of the Redis URL, which Redis authenticates as exactly that user), else the OS user."""
    if (name := redis_user(redis_url)) is not None:
        return name
    try:
        return getpass.getuser() or UNKNOWN
    except (OSError, KeyError):  # no USER/LOGNAME and no passwd entry (a bare container)
        return UNKNOWN


def check_owner(job_id: str, owner: str | None, user: str, *, force: bool, flag: str) -> None:
    """Refuse to steer another user's job unless forced (`flag`: how to force it, `--force` on
    the command line, `force=True` in Python). A job with no recorded owner is anyone's."""
    if force or owner is None or owner == user:
        return
    raise NotYourJob(
        f"job {job_id} belongs to {owner}; you are {user}: pass {flag} to act on it anyway"
    )
