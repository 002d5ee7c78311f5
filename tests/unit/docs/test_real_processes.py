"""The layers page lists the properties whose tests must keep real processes (a kill, a signal,
a frozen or restarted Redis, a browser, a database server, a fresh interpreter): each row names
a test that must exist and must not be skipped, so a property can't lose its test while the
suite is made faster. The properties the suite promises to keep real are pinned here too."""

from __future__ import annotations

import ast
import re

from devtools.local import ROOT

PAGE = ROOT / "docs" / "architecture" / "layers.md"
HEADING = "### Where the process is the point"
ROW = re.compile(r"^\| (?P<property>[^|]+?) \| `(?P<test>tests/[^`]+\.py::test_\w+)` \|$")
# What must stay real whatever else is made cheaper: a word of each property's row.
PINNED = (
    "SIGKILL",
    "frozen",
    "AOF",
    "SIGINT",
    "500 judge calls",
    "Chromium",
    "PostgreSQL",
    "Cloud Storage",
    "pseudo-terminal",
    "exit code",
    "fresh interpreter",
)


def listed() -> dict[str, str]:
    """property -> test id, from the page's table."""
    section = PAGE.read_text(encoding="utf-8").split(HEADING, 1)[1].split("\n#", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines() if line.startswith("| ")]
    found = {m.group("property"): m.group("test") for m in rows if m}
    assert found, f"no rows under {HEADING!r} in {PAGE}"
    return found


def _skipped(decorators: list[ast.expr]) -> bool:
    text = " ".join(ast.unparse(d) for d in decorators)
    return any(mark in text for mark in ("mark.skip", "mark.xfail", "skipif"))


def test_every_listed_test_exists_and_is_not_skipped() -> None:
    for prop, test in listed().items():
        path, name = test.split("::")
        source = ROOT / path
        assert source.is_file(), f"{prop}: {path} is gone"
        tree = ast.parse(source.read_text(encoding="utf-8"))
        defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert name in defs, f"{prop}: {name} is no longer in {path}"
        assert not _skipped(defs[name].decorator_list), f"{prop}: {test} is skipped"
        module_marks = [
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n)
        ]
        assert not _skipped(module_marks), f"{prop}: {path} is skipped as a whole"
        unconditional = [ast.unparse(n) for n in defs[name].body if isinstance(n, ast.Expr)]
        assert not any("pytest.skip(" in line for line in unconditional), (
            f"{prop}: {test} skips itself"
        )


def test_the_properties_the_suite_keeps_real_are_all_listed() -> None:
    properties = " ".join(listed())
    missing = [word for word in PINNED if word not in properties]
    assert missing == [], f"no row of {PAGE.name}'s list names {missing}"
