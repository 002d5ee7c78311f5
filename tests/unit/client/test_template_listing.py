"""The built-in rating templates are listed where a user looks: in `evalq run --help` and `evalq
rank --help` (from the options model's --template flag, a line each) and in the manual's table
(docs/guides/your-own-data.md), each with what its rubric judges."""

from __future__ import annotations

from click.testing import CliRunner

from evalq.client.cli import main
from evalq.metrics.ratings.options import RatingOptions
from evalq.metrics.ratings.rubrics import BUILTIN_RUBRICS, rubric_line
from tests.conftest import ROOT


def test_the_template_flag_lists_every_built_in_rubric() -> None:
    from evalq.core.options import flag_of

    flag = flag_of(RatingOptions.model_fields["template"])
    assert flag is not None
    assert dict(flag.listing) == {name: rubric_line(r) for name, r in BUILTIN_RUBRICS.items()}


def test_help_lists_them_after_the_options() -> None:
    for command in ("run", "rank"):
        shown = CliRunner().invoke(main, [command, "--help"], terminal_width=80).output
        listing = shown.split("Built-in rating templates (--template NAME):", 1)[1]
        words = " ".join(listing.split())
        for name, rubric in BUILTIN_RUBRICS.items():
            assert f"{name} {rubric_line(rubric)}" in words


def test_the_manual_names_every_built_in_rubric_and_what_it_judges() -> None:
    page = (ROOT / "docs" / "guides" / "your-own-data.md").read_text(encoding="utf-8")
    for name, rubric in BUILTIN_RUBRICS.items():
        what = rubric_line(rubric).split(". Reads")[0]
        assert f"| `{name}` | {what[:1].lower()}{what[1:]} |" in page, name
