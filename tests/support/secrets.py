"""A secret a worker holds (an API key) must reach neither Redis nor the worker's log: every
key and every value Redis holds is read back and searched."""

from __future__ import annotations

import json
from typing import Any

_GONE = object()


def redis_value(r: Any, key: str) -> Any:
    kind = r.type(key)
    if kind == "none":
        return _GONE
    if kind == "string":
        return r.get(key)
    if kind == "hash":
        return r.hgetall(key)
    if kind == "list":
        return r.lrange(key, 0, -1)
    if kind == "set":
        return sorted(r.smembers(key))
    if kind == "zset":
        return r.zrange(key, 0, -1)
    raise AssertionError(f"unexpected key type {kind} for {key}")


def assert_not_in_redis(r: Any, secret: str) -> int:
    """Search every key and value for `secret`; the number of keys read (a caller checks it is
    more than a handful, so an empty Redis passes nothing)."""
    scanned = 0
    for key in r.scan_iter(count=1000):
        assert secret not in key
        value = redis_value(r, key)
        if value is _GONE:  # deleted since the scan listed it (an ack, an expired lock)
            continue
        assert secret not in json.dumps(value, default=str), key
        scanned += 1
    return scanned
