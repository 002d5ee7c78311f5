"""docker-compose.yml: parsed and checked for what operations rely on; `docker-compose config`
(Debian's package) validates it when installed. No Docker engine runs here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_command

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_services_and_their_safety_settings() -> None:
    services = compose()["services"]
    assert {"redis", "archive", "worker", "flower", "fake-gemini", "metrics"} <= set(services)
    redis_cmd = " ".join(map(str, services["redis"]["command"]))
    for flag in (
        "--appendonly yes",
        "--maxmemory ${EVALQ_REDIS_MAXMEMORY:-2gb}",
        "--maxmemory-policy noeviction",
        "--requirepass",
    ):
        assert flag in redis_cmd
    for name, service in services.items():  # a worker that exits (Redis gone) comes back
        assert service.get("restart") in ("unless-stopped", "always", "on-failure"), name
    assert "ports" not in services["worker"]  # scaled with --scale worker=N: no fixed host port
    assert any("--basic-auth" in str(c) for c in services["flower"]["command"])
    assert any("--max_tasks" in str(c) for c in services["flower"]["command"])  # bounded memory
    assert services["fake-gemini"]["profiles"] == ["offline"]
    assert "GEMINI_API_KEY" in str(services["worker"]["environment"])
    assert (
        "EVALQ_WORKER_POOL: ${EVALQ_WORKER_POOL:-gevent}"
        in (ROOT / "docker-compose.yml").read_text()
    )


def test_docker_compose_config_accepts_it(tmp_path: Path) -> None:
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip(
            "docker-compose (Debian's package) is not installed; scripts/test installs it when it can"
        )
    env = {
        **os.environ,
        "EVALQ_REDIS_PASSWORD": "s3cret",
        "EVALQ_ARCHIVE_PASSWORD": "pg-s3cret",
        "FLOWER_BASIC_AUTH": "admin:pw",
    }
    compose = [binary, "-f", str(ROOT / "docker-compose.yml")]
    done = run_command([*compose, "--profile", "offline", "config"], env, timeout_s=60)
    assert done.returncode == 0, done.stderr
    resolved = yaml.safe_load(done.stdout)
    assert "redis://:s3cret@redis:6379/0" in str(resolved["services"]["worker"]["environment"])
    # every worker (and Flower, the metrics) on one archive: PostgreSQL in the stack
    worker_env = resolved["services"]["worker"]["environment"]
    assert worker_env["EVALQ_ARCHIVE_URL"] == "postgresql://evalq:pg-s3cret@archive:5432/evalq"
    assert "archive" in resolved["services"]["worker"]["depends_on"]
    redis_cmd = resolved["services"]["redis"]["command"]
    assert redis_cmd[redis_cmd.index("--maxmemory") + 1] == "2gb"  # the default, overridable
    secrets = ("EVALQ_REDIS_PASSWORD", "EVALQ_ARCHIVE_PASSWORD", "FLOWER_BASIC_AUTH")
    without = {k: v for k, v in os.environ.items() if k not in secrets}
    missing = run_command([*compose, "config"], without, timeout_s=60)
    assert missing.returncode != 0  # no password, no stack: the file refuses to start without one
