"""The troubleshooting page against the code: every message `evalq run`, `evalq worker` and
`evalq status` can print has an entry there, and every entry is a message the code still has."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "troubleshooting.md"
PLACEHOLDER = "…"

# Where the three commands' messages are made. A module alone: every message it raises. A
# module with functions: the messages those functions raise, print, return or append to a list
# (the notes and refusals built as text and printed by the command), or list as lines of one.
SOURCES: list[tuple[str, tuple[str, ...]]] = [
    # evalq run: its flags, the client's checks of them, the dataset reader, the --name check
    ("evalq/client/cli/submit.py", ()),
    ("evalq/client/cli/metric_flags.py", ()),
    ("evalq/client/submit.py", ()),
    ("evalq/core/dataset.py", ()),
    ("evalq/client/jobs/lookup.py", ()),
    ("evalq/client/jobs/lookup.py", ("not_found", "ambiguous")),
    ("evalq/core/records.py", ()),
    ("evalq/core/column_names.py", ()),
    ("evalq/core/column_map.py", ()),
    ("evalq/core/candidates.py", ()),
    ("evalq/core/groups.py", ()),
    ("evalq/core/options.py", ()),
    ("evalq/core/bounds.py", ()),
    ("evalq/core/repeats.py", ()),
    ("evalq/client/question_sets.py", ()),
    ("evalq/core/human/labels.py", ("check_human_column",)),
    ("evalq/core/media/backend.py", ()),
    ("evalq/core/media/backend.py", ("refusal",)),
    # evalq run: each metric's checks of its options and the dataset's columns
    ("evalq/metrics/gecko/metric.py", ()),
    ("evalq/metrics/gecko/modes.py", ()),
    ("evalq/metrics/groundedness/metric.py", ()),
    ("evalq/metrics/groundedness/prompts.py", ()),
    ("evalq/metrics/ranking/candidates.py", ()),
    ("evalq/metrics/ranking/metric.py", ()),
    ("evalq/metrics/ratings/columns.py", ()),
    ("evalq/metrics/ratings/judging.py", ()),
    ("evalq/metrics/ratings/rubrics.py", ()),
    ("evalq/metrics/ratings/templates.py", ()),
    # every command: the settings it reads from the environment
    ("evalq/worker/settings.py", ()),
    # evalq worker: what it refuses to start without
    ("evalq/worker/judges/check.py", ("_problem", "vertex_settings_problem")),
    # every command: what ends it with an error that is not a refusal of its own
    ("evalq/client/cli/__init__.py", ("_failed",)),
    # evalq status: the job argument, a job not found, and the notes beside the summary
    ("evalq/client/cli/common.py", ("_job_ref",)),
    ("evalq/client/reads.py", ("memory_warning", "archived")),
    ("evalq/client/archive_notes.py", ("archive_notes",)),
    ("evalq/client/judge_versions.py", ("version_change_note",)),
    ("evalq/client/workers_alive.py", ("no_worker_message",)),
    ("evalq/worker/archive/mixed_archives.py", ("mixed_archives_warning",)),
]

# Found by the rules above, yet no message of their own: a prefix around another message, or
# an error only a caller of the Python API can make.
NOT_MESSAGES = {
    "warning: …",  # the prefix of mixed_archives_warning's words
    "error: …",  # the prefix of every refusal above
    "... and … more (`evalq jobs` lists them)",  # the last line of the list of jobs a name fits
    "…() got unexpected keyword argument(s): …",  # Python API only: the CLI passes no such keyword
    "samples",  # pydantic's error type; its message is the DatasetError's
    # a row's unscored reason, in its results (docs/concepts/unscored.md), not a line printed
    "the model under test (…) returned an empty response",
}

# At least this many letters besides the placeholders, or it is a part, not a message.
MIN_LETTERS = 5


def skeleton(node: ast.expr, constants: dict[str, str]) -> str:
    """A message as the code writes it, every part computed at run time as one placeholder
    (a module's string constant is written out)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(skeleton(value, constants) for value in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return skeleton(node.left, constants) + skeleton(node.right, constants)
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.FormattedValue) and node.format_spec is None:
        return skeleton(node.value, constants)  # a module's constant, as it prints
    return PLACEHOLDER


def _joined(text: str) -> str:
    """Runs of placeholders as one: `{a}{b}` prints as one run of words to a reader. Rich's
    markup (`[red]`, `[/]`) is dropped: the terminal shows it as colour, not text."""
    text = re.sub(r"\[/?[a-z ]*\]", "", text)
    return re.sub(f"(?:{PLACEHOLDER})+", PLACEHOLDER, text)


def messages_in(path: Path, functions: tuple[str, ...]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    if functions:
        scopes: list[ast.AST] = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in functions
        ]
        assert {s.name for s in scopes if isinstance(s, ast.FunctionDef)} == set(functions), path
    else:
        scopes = [tree]
    found: list[ast.expr] = []
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                found.append(node.exc.args[0])
            elif functions and isinstance(node, ast.Return) and node.value is not None:
                found.append(node.value)
            elif (
                functions
                and isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "print")
                and node.args
            ):
                found.append(node.args[0])
            elif functions and isinstance(node, ast.List):
                found.extend(node.elts)
    texts = {_joined(" ".join(skeleton(n, constants).split())) for n in found}
    return {t for t in texts if len(re.sub(r"[^A-Za-z]", "", t)) >= MIN_LETTERS}


def code_messages() -> set[str]:
    """Every message of SOURCES, read from the code's syntax tree, not by running it: a string
    or f-string (its computed parts written `…`, runs of spaces as one) that is raised as an
    exception's first argument anywhere in a listed module, or, in a listed function, printed,
    returned, appended or listed. Too few letters (MIN_LETTERS) is a fragment; NOT_MESSAGES
    are prefixes and API-only errors. The page writes each the same way, as a term."""
    found: set[str] = set()
    for source, functions in SOURCES:
        found |= messages_in(ROOT / source, functions)
    return found - NOT_MESSAGES


# An entry: a definition list's term that is one code span, then its definition (`:   `).
ENTRY = re.compile(r"^(`+) ?(?P<message>.+?) ?\1\n:   ", re.MULTILINE)


def page_messages() -> list[str]:
    return [m["message"] for m in ENTRY.finditer(PAGE.read_text(encoding="utf-8"))]


def test_every_message_has_an_entry() -> None:
    """A message the code can print and the page does not explain: add it to the page."""
    missing = sorted(code_messages() - set(page_messages()))
    assert not missing, "add these to docs/troubleshooting.md:\n" + "\n".join(missing)


def test_every_entry_is_a_message_of_the_code() -> None:
    """An entry for a message no longer printed (or printed in other words) misleads."""
    stale = sorted(set(page_messages()) - code_messages())
    assert not stale, "no longer in the code:\n" + "\n".join(stale)


def test_each_message_once() -> None:
    listed = page_messages()
    assert len(listed) == len(set(listed)), "an entry appears twice on the page"


def test_the_rules_find_messages_in_each_source() -> None:
    """A source listed above from which the rules find nothing has moved or been renamed."""
    empty = [s for s, f in SOURCES if not (messages_in(ROOT / s, f) - NOT_MESSAGES)]
    assert not empty, empty


def test_the_rules_find_each_kind_of_message(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "NOTE = 'a constant note'\n"
        "def refuse(x):\n    raise ValueError(f'the value {x} is refused by {NOTE}')\n"
        "def note(x):\n"
        "    out = [f'listed {x} first']\n"
        "    out.append('an appended note')\n"
        "    console.print(f'[red]error:[/] printed {x}{x}')\n"
        "    return NOTE\n"
        "def other():\n    return 'never a message here'\n",
        encoding="utf-8",
    )
    assert messages_in(source, ()) == {"the value … is refused by a constant note"}
    assert messages_in(source, ("note",)) == {
        "listed … first",
        "an appended note",
        "error: printed …",
        "a constant note",
    }


def test_skeleton_of_an_f_string() -> None:
    tree = ast.parse('f"no job {ref!r} in Redis at {where}" + SUFFIX', mode="eval")
    assert skeleton(tree.body, {"SUFFIX": ", or expired"}) == ("no job … in Redis at …, or expired")
