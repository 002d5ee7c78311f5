"""The tests keep one definition of each helper: a helper two files need lives in tests/support and
both import it, and two helpers that do different things have names that say so. Two files
defining one name drift apart, or leave a reader guessing which one a test uses.

A helper is a module-level def, async def or class whose name does not start with test or Test,
pytest's hooks and the conftest files' own fixtures included; a fixture is also never bound
again, in any way, outside the conftest.py that defines it."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@pytest.fixture(scope="module")
def parsed() -> dict[str, ast.Module]:
    """Every file under tests/, parsed once for both checks."""
    return {
        path.relative_to(TESTS.parent).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(TESTS.rglob("*.py"))
    }


def _helpers(module: ast.Module) -> list[Definition]:
    return [
        node
        for node in module.body
        if isinstance(node, Definition) and not node.name.lower().startswith("test")
    ]


def _is_fixture(node: Definition) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)


def _bound(module: ast.Module) -> set[str]:
    """Every name the module binds at its top level: defs, classes and assignments."""
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, Definition):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def defined_twice(modules: dict[str, ast.Module]) -> dict[str, list[str]]:
    """Each helper name defined in more than one file, with those files."""
    where: dict[str, list[str]] = defaultdict(list)
    for path, module in modules.items():
        for name in sorted({node.name for node in _helpers(module)}):
            where[name].append(path)
    return {name: paths for name, paths in sorted(where.items()) if len(paths) > 1}


def fixtures_bound_again(modules: dict[str, ast.Module]) -> dict[str, list[str]]:
    """Each conftest fixture that another file binds again, with those files."""
    fixtures: dict[str, str] = {}
    for path, module in modules.items():
        if path.endswith("/conftest.py"):
            for node in _helpers(module):
                if _is_fixture(node):
                    fixtures[node.name] = path
    again: dict[str, list[str]] = defaultdict(list)
    for path, module in modules.items():
        for name in sorted(_bound(module) & set(fixtures)):
            if fixtures[name] != path:
                again[name].append(path)
    return {name: [fixtures[name], *paths] for name, paths in sorted(again.items())}


def _shown(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}: {', '.join(paths)}" for name, paths in found.items())


def test_no_helper_name_is_defined_in_two_files(parsed: dict[str, ast.Module]) -> None:
    found = defined_twice(parsed)
    assert not found, (
        f"{len(found)} helper name(s) defined in more than one file under tests/: keep one in "
        f"tests/support and import it, or name each for what it builds\n{_shown(found)}"
    )


def test_no_file_binds_a_conftest_fixtures_name_again(parsed: dict[str, ast.Module]) -> None:
    found = fixtures_bound_again(parsed)
    assert not found, (
        f"conftest fixture(s) bound again elsewhere: use the conftest's, or name yours for "
        f"what it holds\n{_shown(found)}"
    )


def test_the_checks_find_a_second_definition_and_a_fixture_bound_again() -> None:
    """The two checks above, on files made up here: they can fail."""
    modules = {
        "tests/conftest.py": ast.parse("@pytest.fixture\ndef client(): ...\n"),
        "tests/unit/test_a.py": ast.parse("def rating(v): ...\ndef test_a(): ...\n"),
        "tests/unit/test_b.py": ast.parse(
            "async def rating(v): ...\nclient = serve()\ndef test_a(): ...\nclass TestB: ...\n"
        ),
    }
    assert defined_twice(modules) == {"rating": ["tests/unit/test_a.py", "tests/unit/test_b.py"]}
    assert fixtures_bound_again(modules) == {
        "client": ["tests/conftest.py", "tests/unit/test_b.py"]
    }
