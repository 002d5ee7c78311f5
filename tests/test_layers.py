"""The layer contracts (pyproject.toml, [tool.importlinter]) hold, and cover every module: a new
module that is in none of the lists would escape them silently."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

CLIENT_SIDE = {"__main__", "api", "cli", "client", "render", "report"}


def contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((Path(ROOT) / "pyproject.toml").read_text())
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def modules(package: str) -> set[str]:
    return {p.stem for p in (Path(ROOT) / package).glob("*.py") if p.stem != "__init__"}


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


def test_every_evalq_module_is_domain_or_client_side() -> None:
    domain = contracts()["domain"]
    sources = {m.removeprefix("evalq.") for m in domain["source_modules"]}
    client = {
        m.removeprefix("evalq.") for m in domain["forbidden_modules"] if m.startswith("evalq.")
    }
    assert client == CLIENT_SIDE
    assert sources | client == modules("evalq")
    assert not sources & client
    layers = contracts()["layers"]["layers"]
    assert {m.strip().removeprefix("evalq.") for m in layers[0].split(":")} == CLIENT_SIDE


def test_every_runtime_module_is_kept_from_the_fake_server() -> None:
    runtime = {f"worker.{m}" for m in modules("worker")}
    assert set(contracts()["runtime-without-fake"]["source_modules"]) == runtime
    assert runtime <= set(contracts()["fake-beside-runtime"]["forbidden_modules"])
