"""`evalq run` without --wait says at once when no worker is alive on its Redis (the job would
sit at 0 rows done), and says nothing of it when one is."""

from __future__ import annotations

from pathlib import Path

from evalq.worker.store import Store
from tests.support.cli import bare_env, run_evalq


def submitted(scratch_url: str, tmp_path: Path) -> tuple[str, str]:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}
    done = run_evalq(env, "run", "pointwise", str(data), "--template", "fluency", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job = done.stdout.split()[1]  # "job ID enqueued: ..."
    return job, done.stderr


def test_run_without_wait_says_no_worker_is_alive_at_once(
    scratch_url: str, store: Store, tmp_path: Path
) -> None:
    job, said = submitted(scratch_url, tmp_path)
    address = scratch_url.split("//")[1].split("/", maxsplit=1)[0]
    warning = (
        f"warning: job {job}: no worker is alive on Redis {address}: nothing runs the job until "
        f"one starts there; start one with `EVALQ_REDIS_URL={scratch_url} evalq worker`"
    )
    assert warning in said.splitlines(), said

    store.register_share("w1", 1, 600)  # a worker alive on this Redis
    _, said = submitted(scratch_url, tmp_path)
    assert "no worker" not in said
