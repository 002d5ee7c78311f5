"""Every Redis key has one owner: evalq.worker.store.keys names them all, evalq.worker.store alone
talks to Redis.

The first tests read the source (ast), the way a reviewer would grep: a key spelled anywhere
else, or a module that reaches past the Store to its client, is found by name. The last ones
pin every key to the spelling the older code used, so a job it stored stays readable.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

KEY_MODULE = Path("evalq/worker/store/keys.py")
STORE = Path("evalq/worker/store")  # the package: every module in it talks to Redis
# Modules that may import the redis package besides the Store: the local process harness pings
# a redis-server it started, the sizing tool reads INFO memory of a redis-server it started,
# and the broker's teardown guard raises redis-py's ConnectionError (it talks to no Redis
# itself). The client side names Redis's errors through evalq.worker.jobs.reads.
IMPORTS_REDIS = {
    Path("devtools/local.py"),
    Path("devtools/redis_sizing.py"),
    Path("evalq/worker/celery_app/broker_teardown.py"),
}


@pytest.fixture(scope="module")
def sources() -> dict[Path, ast.Module]:
    """Every module of the packages, parsed once for the scans below (a second each)."""
    found = {}
    for package in ("evalq", "scripts", "devtools"):
        for path in sorted((Path(ROOT) / package).rglob("*.py")):
            rel = path.relative_to(ROOT)
            found[rel] = ast.parse(path.read_text(), filename=str(rel))
    return found


def test_redis_keys_are_spelled_in_the_key_module_only(sources: dict[Path, ast.Module]) -> None:
    spelled = [
        f"{path}:{node.lineno}: {node.value!r}"
        for path, tree in sources.items()
        if path != KEY_MODULE
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("evalq:")
        and not _is_docstring(tree, node)
    ]
    assert spelled == []


def test_no_module_reaches_past_the_store_to_its_client(sources: dict[Path, ast.Module]) -> None:
    reached = [
        f"{path}:{node.lineno}"
        for path, tree in sources.items()
        if STORE not in path.parents
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("r", "_r")
    ]
    assert reached == []


def test_only_the_store_imports_redis(sources: dict[Path, ast.Module]) -> None:
    importing = sorted(
        str(path)
        for path, tree in sources.items()
        if path not in IMPORTS_REDIS and STORE not in path.parents
        for node in ast.walk(tree)
        if (
            isinstance(node, ast.Import)
            and any(a.name.split(".")[0] == "redis" for a in node.names)
        )
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "redis")
    )
    assert importing == []


def _is_docstring(tree: ast.Module, node: ast.Constant) -> bool:
    """A docstring may describe a key (the Store's schema table); only code spells one."""
    for owner in ast.walk(tree):
        if isinstance(owner, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = owner.body
            if body and isinstance(body[0], ast.Expr) and body[0].value is node:
                return True
    return False


def test_every_key_keeps_the_spelling_older_jobs_were_stored_under() -> None:
    from evalq.worker.store import keys

    assert keys.JOBS == "evalq:jobs"
    assert keys.ACTIVE_JOBS == "evalq:jobs:active"
    assert keys.WATCHDOG_LOCK == "evalq:watchdog:lock"
    assert keys.job("j1") == "evalq:job:j1"
    assert keys.job_rows("j1") == "evalq:job:j1:rows"
    # The rest of a job's keys: evalq:job:<job>:<what it keeps>[:<row>], named as their function.
    for name in ("activity", "redrives", "done", "results", "unscored", "summary", "fatal"):
        assert getattr(keys, name)("j1") == f"evalq:job:j1:{name}", name
    for name in ("row", "plan", "verdicts"):
        assert getattr(keys, name)("j1", "7") == f"evalq:job:j1:{name}:7", name
    assert keys.upload("j1", "ab12") == "evalq:job:j1:file:ab12"
    assert keys.upload_lock("j1", "ab12") == "evalq:job:j1:file:ab12:lock"
    assert keys.rubric("ff00") == "evalq:rubric:ff00"
    assert keys.call("ff00") == "evalq:call:ff00"
    assert keys.limiter("gemini-2.5-flash") == (
        "evalq:limiter:gemini-2.5-flash:requests",
        "evalq:limiter:gemini-2.5-flash:tokens",
    )


def test_the_rubric_cache_id_is_the_digest_older_rubrics_were_stored_under() -> None:
    import hashlib
    import json

    from evalq.metrics.gecko.metric import rubric_cache_id

    digest = hashlib.sha256(json.dumps(["a cat", "m", "v3"]).encode()).hexdigest()
    assert rubric_cache_id("a cat", "m", "v3") == digest
