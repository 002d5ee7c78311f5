"""The layer contracts (pyproject.toml, [tool.importlinter]) hold, and cover every module: a new
module or package that is in none of them would escape them silently."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

DOMAIN = {
    "evalq.core",
    "evalq.metrics",
    "evalq.stats",
    "evalq.examples",
    "evalq.comparisons",
    "evalq.metric",
}
CLIENT_SIDE = {"evalq.__main__", "evalq.client"}
RUNTIME = {"evalq.tasks", "evalq.worker"}
FAKE = "evalq.fake_gemini"
HARNESS = "evalq.testing"


def contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((Path(ROOT) / "pyproject.toml").read_text())
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def children(package: str) -> set[str]:
    """The modules and subpackages directly inside a package, by dotted name."""
    folder = Path(ROOT, *package.split("."))
    found = {f"{package}.{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"}
    found |= {f"{package}.{p.parent.name}" for p in folder.glob("*/__init__.py")}
    return found


def layer(text: str) -> set[str]:
    return {m.strip() for m in text.replace("|", ":").split(":")}


def test_lint_imports_keeps_every_contract() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_every_evalq_module_is_in_a_layer_or_the_fake_server() -> None:
    assert children("evalq") == DOMAIN | CLIENT_SIDE | RUNTIME | {FAKE, HARNESS}
    domain = contracts()["domain"]
    assert set(domain["source_modules"]) == DOMAIN
    assert set(domain["forbidden_modules"]) >= CLIENT_SIDE | RUNTIME | {FAKE, HARNESS}
    layers = contracts()["layers"]["layers"]
    assert layer(layers[0]) == CLIENT_SIDE | {HARNESS}
    assert layers[1:3] == ["evalq.tasks", "evalq.worker"]
    assert layer(layers[-1]) == DOMAIN
    assert set(contracts()["domain-layers"]["layers"]) == DOMAIN


def test_the_metric_harness_runs_in_process() -> None:
    harness = contracts()["testing-in-process"]
    assert harness["source_modules"] == [HARNESS]
    assert set(harness["forbidden_modules"]) >= {"celery", "redis"} | CLIENT_SIDE | RUNTIME


def test_every_metric_package_is_in_the_metric_layers() -> None:
    metrics = contracts()["metrics"]
    named = set().union(*(layer(x) for x in metrics["layers"]))
    assert {f"evalq.metrics.{m}" for m in named} == children("evalq.metrics")


def test_the_fake_server_is_kept_apart_from_everything_that_runs_jobs() -> None:
    assert not (Path(ROOT) / "evalq" / "worker" / "fake_gemini").exists()
    assert set(contracts()["runtime-without-fake"]["source_modules"]) == (
        DOMAIN | CLIENT_SIDE | RUNTIME
    )
    fake_may_not = set(contracts()["fake-beside-runtime"]["forbidden_modules"])
    assert RUNTIME | {"evalq.client"} <= fake_may_not


def test_every_module_of_the_runtime_is_in_its_folder_layers() -> None:
    folders = contracts()["worker-folders"]
    named = set().union(*(layer(x) for x in folders["layers"]))
    assert {f"evalq.worker.{m}" for m in named} == children("evalq.worker")
