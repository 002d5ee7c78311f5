"""What a metric is lives in its package: outside evalq/metrics and the registry that lists the
metrics, no code branches on a metric's name or keeps a table keyed by one, so a new metric is one
package and a registry entry, and nothing elsewhere silently misses it.

Code that needs to know something of a metric asks it (evalq.core.metric.Metric: candidate_field,
compared_on, human_labels, view, refusal...). Naming a metric is still allowed where it is a
value, not a key: a default argument (`metric="gecko-image"`), the `evalq rank` command passing
its own metric, a column named "rank" in a leaderboard."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evalq.core.registry import BUILT_IN

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("evalq", "devtools")
ALLOWED = (ROOT / "evalq" / "metrics", ROOT / "evalq" / "core" / "registry.py")
NAMES = frozenset(BUILT_IN)
LOOKUPS = frozenset({"get", "pop", "setdefault"})


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _all_names(node: ast.AST) -> bool:
    """A literal collection of metric names only: a table of metrics (("pointwise", "rank"))."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else []
    return bool(items) and all(_is_name(item) for item in items)


def _finding(node: ast.AST) -> str | None:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        if any(_is_name(o) or _all_names(o) for o in operands):
            return "compares with a metric's name"
    elif isinstance(node, ast.Dict):
        keys = [k for k in node.keys if k is not None]
        named = sum(_is_name(k) for k in keys)
        if named >= 2 or (named and named == len(keys)):
            return "a table keyed by metrics' names"
    elif isinstance(node, ast.Tuple | ast.List | ast.Set) and _all_names(node):
        return "a collection of metrics' names"
    elif isinstance(node, ast.Subscript) and _is_name(node.slice):
        return "looks a metric's name up in a table"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in LOOKUPS and node.args and _is_name(node.args[0]):
            return "looks a metric's name up in a table"
    elif isinstance(node, ast.MatchValue) and _is_name(node.value):
        return "matches a metric's name"
    return None


def findings(source: str, where: str) -> list[str]:
    """Each place in the source that branches on or tables metric names, as `where:line: why`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (why := _finding(node)) is not None:
            found.append(f"{where}:{getattr(node, 'lineno', '?')}: {why}")
    return found


def _scanned() -> list[Path]:
    files = [p for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))]
    return [p for p in files if not any(p == a or a in p.parents for a in ALLOWED)]


def test_no_code_outside_the_metrics_branches_on_a_metric_name() -> None:
    found = [
        finding
        for path in _scanned()
        for finding in findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, "ask the metric instead (evalq.core.metric.Metric):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'if metric == "pointwise":\n    pass',
        'ordinal = config.metric != "rank"',
        'if metric in ("pairwise", "rank"):\n    pass',
        'FIELDS = {"gecko-image": "image", "gecko-video": "video"}',
        'OWN = frozenset({"rank"})',
        'TEXT = ("pointwise", "groundedness")',
        'field = FIELDS["pointwise"]',
        'view = VIEWS.get("groundedness", default)',
        'match metric:\n    case "pairwise":\n        pass',
    ],
)
def test_each_way_of_keying_on_a_metric_name_is_found(source: str) -> None:
    assert findings(source, "x.py")


@pytest.mark.parametrize(
    "source",
    [
        'def evaluate(metric: str = "gecko-image") -> None: ...',
        'submit_and_report("rank", dataset, options)',
        'row = {"column": c, "rank": s.rank, "value": v}',
        'columns = ["column", "group", "rank", "candidate"]',
        "if metric.own_candidates:\n    pass",
    ],
)
def test_a_metric_named_as_a_value_is_not_a_branch(source: str) -> None:
    assert not findings(source, "x.py")
