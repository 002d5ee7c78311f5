"""The wheel pip builds from the checkout installs one top-level name, evalq: no worker, tasks,
fake_gemini or devtools to collide with a user's own modules. What the runtime reads at run
time beside the code (the store's Lua scripts, the archive's migrations) is inside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def checkout_copy(target: Path) -> Path:
    """The working tree's files (tracked and new, symlinks kept as links), so the build's
    build/ and egg-info land in a copy and not in the checkout other tests read."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        source = Path(ROOT, name)
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet committed
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)
    return target


def test_the_wheel_holds_evalq_alone_with_its_scripts_and_migrations(tmp_path: Path) -> None:
    source = checkout_copy(tmp_path / "src")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("evalq-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"evalq", wheel.name.split("-py3")[0] + ".dist-info"}, sorted(tops)

    lua = {Path(n).name for n in names if n.startswith("evalq/worker/store/lua/")}
    assert lua == {p.name for p in Path(ROOT, "evalq", "worker", "store", "lua").glob("*.lua")}
    assert len(lua) > 5
    migrations = Path(ROOT, "evalq", "worker", "archive", "migrations")
    shipped = {n for n in names if n.startswith("evalq/worker/archive/migrations/")}
    for path in [migrations / "env.py", *migrations.glob("versions/*.py")]:
        assert path.relative_to(ROOT).as_posix() in shipped, path
    for package in (
        "evalq/worker/__init__.py",
        "evalq/tasks/rows.py",
        "evalq/fake_gemini/__main__.py",
    ):
        assert package in names
