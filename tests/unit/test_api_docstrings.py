"""The Python API reference renders each parameter from its docstring's Google-style `Args:`
section: a parameter missing there is missing from the manual's table."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

import evalq

# A section's title (`Args:`), then entries indented one level (`name:` or `name (type):`),
# until a line at the title's own indent (the next section, or the end).
ENTRY = re.compile(r"^    (\*{0,2}\w+)(?: \([^)]*\))?:", re.MULTILINE)


def args_listed(doc: str | None, section: str = "Args") -> list[str]:
    title = re.compile(rf"^{section}:\n((?:[ \t]+.*\n?|\n)+)", re.MULTILINE)
    found = title.search(inspect.cleandoc(doc or "") + "\n")
    return [] if found is None else [n.lstrip("*") for n in ENTRY.findall(found.group(1))]


def public_callables() -> list[tuple[str, Callable[..., Any], str | None]]:
    """Every function evalq exports, and the public methods and constructor of its classes
    (a constructor's parameters documented on the class, as mkdocstrings shows them)."""
    out: list[tuple[str, Callable[..., Any], str | None]] = []
    for name in evalq.__all__:
        thing = getattr(evalq, name)
        if inspect.isclass(thing):
            out.append((name, thing.__init__, thing.__doc__))
            for attr, member in vars(thing).items():
                if inspect.isfunction(member) and not attr.startswith("_"):
                    out.append((f"{name}.{attr}", member, member.__doc__))
        else:
            out.append((name, thing, thing.__doc__))
    return out


@pytest.mark.parametrize(
    ("name", "function", "doc"), public_callables(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_parameter_is_in_args(
    name: str, function: Callable[..., Any], doc: str | None
) -> None:
    wanted = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
    listed = args_listed(doc)
    missing = [p for p in wanted if p not in listed]
    assert not missing, f"{name}: add to its docstring's Args: {missing}"
    unknown = [p for p in listed if p not in wanted]
    assert not unknown, f"{name}: Args names what it does not take: {unknown}"


def test_evaluates_keywords_are_its_other_parameters() -> None:
    """evaluate's settings come in **keywords (EvaluateSpec): each gets a row of its own."""
    from evalq.client.api import EvaluateSpec

    listed = args_listed(evalq.evaluate.__doc__, "Other Parameters")
    assert sorted(listed) == sorted(EvaluateSpec.__annotations__)


def test_args_are_read_as_google_sections() -> None:
    doc = """Do it.

    Args:
        data: the rows.
        metric (str): which one.
            More on it.
        **keywords: the rest.

    Returns:
        A job.
    """
    assert args_listed(doc) == ["data", "metric", "keywords"]
    assert args_listed(doc, "Returns") == []
