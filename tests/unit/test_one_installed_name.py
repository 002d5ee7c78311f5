"""evalq installs one top-level name: the runtime, the tasks and the fake server are evalq.worker,
evalq.tasks and evalq.fake_gemini. The top-level worker/ and tasks/ are symlinks into evalq/
for the layout's sake; code that imported through them would load a second copy of every module
it reached, and a user's own worker.py or tasks.py could stand in for it."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT

OLD_NAMES = frozenset({"worker", "tasks", "fake_gemini"})
SCANNED = ("evalq", "tests", "devtools", "scripts")
# A dotted name in a string (celery -A, mock.patch, importlib, python -m) that reaches a module
# through the top-level worker, tasks or fake_gemini rather than through evalq.
DOTTED = re.compile(r"(worker|tasks|fake_gemini)(\.\w+)*")


def python_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *SCANNED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        Path(ROOT, p) for p in out.splitlines() if p.endswith(".py") and Path(ROOT, p).is_file()
    ]


def is_module_of_evalq(dotted: str) -> bool:
    path = Path(ROOT, "evalq", *dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def old_names_used(tree: ast.Module) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name) for a in node.names if a.name.split(".")[0] in OLD_NAMES
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in OLD_NAMES:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if DOTTED.fullmatch(text) and "." in text and is_module_of_evalq(text):
                found.append((node.lineno, text))
    return found


def test_no_code_imports_the_old_top_level_names() -> None:
    files = [p for p in python_files() if p != Path(__file__)]  # its examples below name them
    assert len(files) > 300, len(files)
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in files
        for line, name in old_names_used(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "\n".join(found)


def test_the_check_finds_imports_and_dotted_strings_of_the_old_names() -> None:
    source = (
        "import worker.celery_app.app\nfrom tasks import rows\nfrom fake_gemini.server import x\n"
        "import evalq.worker.celery_app.app\nfrom evalq.tasks import rows\nfrom . import worker\n"
        "patch('worker.judges.limiter')\nargv = ['-A', 'worker.celery_app.app']\nname = 'worker.sqlite'\n"
    )
    assert old_names_used(ast.parse(source)) == [
        (1, "worker.celery_app.app"),
        (2, "tasks"),
        (3, "fake_gemini.server"),
        (7, "worker.judges.limiter"),
        (8, "worker.celery_app.app"),
    ]


def test_worker_and_tasks_at_the_top_are_links_into_evalq() -> None:
    for name in ("worker", "tasks"):
        top = Path(ROOT, name)
        assert top.is_symlink() and top.readlink() == Path("evalq", name), top
    assert not Path(ROOT, "fake_gemini").exists()
