"""The layout a newcomer can hold: modules small enough to read, every package under the
import-cycle contract, and the manual's drawing of a row's path (docs/architecture/row-path.md) naming modules that exist."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

# About 700 lines a module: a concept kept whole reads better than one cut to fit a smaller cap.
SERVICE = ("evalq",)  # the runtime and the tasks too: evalq/worker, evalq/tasks
SERVICE_MAX_LINES = 700
OTHER_MAX_LINES = 700  # tests, the fake server, dev tools, scripts


def tracked_python() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [Path(ROOT, line) for line in out.splitlines() if Path(ROOT, line).is_file()]


def test_no_module_is_too_long_to_read() -> None:
    too_long = []
    for path in tracked_python():
        relative = path.relative_to(ROOT)
        limit = SERVICE_MAX_LINES if relative.parts[0] in SERVICE else OTHER_MAX_LINES
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            too_long.append(f"{relative}: {lines} lines (at most {limit})")
    assert not too_long, "\n".join(too_long)


def test_every_package_is_checked_for_import_cycles() -> None:
    config = tomllib.loads(Path(ROOT, "pyproject.toml").read_text())["tool"]["importlinter"]
    acyclic = next(c for c in config["contracts"] if c["type"] == "acyclic_siblings")
    covered = set(acyclic["ancestors"])
    packages = set()
    for root in config["root_packages"]:
        for init in Path(ROOT, root).rglob("__init__.py"):
            package = init.parent.relative_to(ROOT)
            siblings = [p for p in init.parent.iterdir() if p.suffix == ".py" or p.is_dir()]
            if len([p for p in siblings if p.name not in {"__init__.py", "__pycache__"}]) > 1:
                packages.add(".".join(package.parts))
    assert packages <= covered, sorted(packages - covered)


def drawing() -> str:
    page = Path(ROOT, "docs", "architecture", "row-path.md").read_text(encoding="utf-8")
    section = page.split("## A row's path, module by module", 1)[1]
    return section.split("```", 2)[1]


def test_the_manual_draws_a_row_path_through_modules_that_exist() -> None:
    named = re.findall(r"\b((?:evalq|worker|tasks|devtools|fake_gemini)/[\w/]+\.py)\b", drawing())
    assert len(named) >= 10, named
    missing = [name for name in named if not Path(ROOT, name).is_file()]
    assert not missing, missing


def test_no_module_is_in_an_import_cycle() -> None:
    """Stronger than the acyclic_siblings contract, which compares a package's children: no
    chain of imports (lazy ones included) leads from any module back to itself, across packages
    too. scripts/demo.py is a script nothing imports, so it can close no cycle."""
    import grimp

    graph = grimp.build_graph(*ROOT_PACKAGES)
    cycles = [sorted(c) for c in strongly_connected(graph) if len(c) > 1]
    assert not cycles, cycles


ROOT_PACKAGES = ("evalq", "devtools")


def strongly_connected(graph: Any) -> list[set[str]]:
    """Tarjan's components of the import graph, iteratively (the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    imported = sorted(graph.find_modules_directly_imported_by(child))
                    work.append((child, iter(imported)))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                found.append(component)
    return found
