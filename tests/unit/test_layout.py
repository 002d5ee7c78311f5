"""The layout a newcomer can hold: modules small enough to read, comments true and short, every
package under the import-cycle contract, and the manual's drawing of a row's path
(docs/architecture/row-path.md) naming modules that exist."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
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


# The folders (or modules) whose comments are done: a module docstring of at most three lines,
# saying why the module exists, and no history in any comment or docstring (that is what commits
# are for). A folder joins this tuple once its modules are done.
COMMENTED = (
    "evalq/worker/celery_app",
    "evalq/worker/jobs",
    "evalq/worker/batch",
    "evalq/worker/judges",
    "evalq/worker/store",
    "evalq/worker/dispatch",
    "evalq/worker/settings.py",
    "evalq/worker/archive",
    "evalq/stats",
    "evalq/fake_gemini",
    "evalq/examples",
    "devtools",
    "evalq/client",
    "evalq/core",
    "evalq/tasks",
    "evalq/worker/lifecycle",
    "evalq/worker/runtime.py",
    "evalq/__init__.py",
    "evalq/metric.py",
    "evalq/testing.py",
    "evalq/__main__.py",
)
# Inside those: modules not done yet, and Alembic's revision files, whose docstring is Alembic's
# header (Revision ID, Revises, Create Date).
NOT_COMMENTED_YET = (
    "evalq/core/models.py",
    "evalq/core/summary.py",
    "evalq/core/metric.py",
    "evalq/core/metric_base.py",
    "evalq/core/dry_run.py",
    "evalq/core/dry_report.py",
    "evalq/core/counters.py",
    "evalq/core/judge.py",
    "evalq/core/registry.py",
    "evalq/worker/archive/__init__.py",
    "evalq/worker/archive/migrations/versions",
)
MODULE_DOCSTRING_MAX_LINES = 3
# Words that tell the story of the code rather than what is true of it; kept small and exact, so
# that a hit is history and not the same words in another sense.
HISTORY = re.compile(
    "|".join(
        (
            r"\bissues? #?\d+",
            r"\bitems? \d+\b",
            r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )\bused to\b",  # not "is used to"
            r"\buntil now\b",
            r"\bbefore this (?:change|check|fix)\b",
            r"\bthe code before\b",
            r"\b(?:was|were) (?:moved|renamed|split) (?:from|to|into|out|here)\b",
            r"\bbefore the (?:split|change|fix|refactor|rewrite)\b",
            r"\bold code\b",
            r"\bas before\b",
            r"\bformerly\b",
            r"\bpreviously\b",
            r"\bthe CI failure\b",
        )
    ),
    re.IGNORECASE,
)
# Another project's issue, cited by its number ("pytest-xdist's issue #1386"), is a source, not
# this code's history.
CITATION = re.compile(r"[\w.-]+'s issues? #\d+", re.IGNORECASE)
# Where no comment or docstring tells history: the commented folders, and every test.
HISTORY_CHECKED = (*COMMENTED, "tests")


def modules_under(places: tuple[str, ...]) -> list[Path]:
    def under(relative: str, places: tuple[str, ...]) -> bool:
        return any(relative == p or relative.startswith(p.rstrip("/") + "/") for p in places)

    found = []
    for path in tracked_python():
        relative = path.relative_to(ROOT).as_posix()
        if under(relative, places) and not under(relative, NOT_COMMENTED_YET):
            found.append(path)
    return sorted(found)


def commented_modules() -> list[Path]:
    return modules_under(COMMENTED)


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """Every docstring (module, class, function) and every comment, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                found.append((getattr(node, "lineno", 1), text))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def test_the_commented_folders_are_checked() -> None:
    missing = [p for p in COMMENTED if not Path(ROOT, p).exists()]
    assert not missing, missing
    assert len(commented_modules()) >= 50


def test_module_docstrings_say_why_in_three_lines_at_most() -> None:
    too_long = []
    for path in commented_modules():
        text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        lines = len(text.strip().splitlines()) if text else 0
        if lines > MODULE_DOCSTRING_MAX_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not too_long, "\n".join(too_long)


def test_no_comment_tells_the_history_of_the_code() -> None:
    checked = modules_under(HISTORY_CHECKED)
    assert len(checked) > len(commented_modules()) + 200  # the tests are among them
    told = []
    for path in checked:
        for line, text in comments_and_docstrings(path.read_text(encoding="utf-8")):
            if match := HISTORY.search(CITATION.sub("", text)):
                told.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}")
    assert not told, "\n".join(told)


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
