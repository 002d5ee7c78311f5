"""The generated reference pages hold everything they claim to: every `evalq` command and its flags,
every setting's variable, every Redis key and every archive table and column, read from the built
site. Each check is also run on a page lacking one name, so a check that cannot fail shows here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from devtools.docs_hooks import PAGES, expand
from devtools.reference import cli_page
from devtools.reference.settings_page import env_names
from evalq.worker.archive import schema
from evalq.worker.settings import Settings
from evalq.worker.store.key_table import every_key_shape
from tests.conftest import ROOT
from tests.unit.docs.site_pages import (
    Section,
    built_page,
    flag_shown,
    names_not_in,
    page_codes,
    page_headings,
    page_sections,
)


def evalq_commands() -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command of `evalq`, groups and their subcommands, by its full name."""
    from evalq.client.cli import main

    def walk(
        command: click.Command, ctx: click.Context
    ) -> Iterator[tuple[str, click.Command, click.Context]]:
        yield ctx.command_path, command, ctx
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, click.Context(sub, info_name=name, parent=ctx))

    yield from walk(main, click.Context(main, info_name="evalq"))


def command_flags(command: click.Command, ctx: click.Context) -> list[str]:
    """Every flag a command takes, the metric flags `run` and `rank` add lazily included."""
    return [
        flag
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and not param.hidden
        for flag in (*param.opts, *param.secondary_opts)
        if flag.startswith("-")
    ]


def flags_missing(sections: list[Section]) -> dict[str, list[str]]:
    """Per command, the commands the page has no section for, or the flags its section lacks."""
    by_heading = {section.heading: section.words() for section in sections}
    missing: dict[str, list[str]] = {}
    for path, command, ctx in evalq_commands():
        if path not in by_heading:
            missing[path] = ["(no section)"]
            continue
        lacking = [f for f in command_flags(command, ctx) if not flag_shown(f, by_heading[path])]
        if lacking:
            missing[path] = lacking
    return missing


def setting_variables() -> list[str]:
    return [env for name, info in Settings.model_fields.items() for env in env_names(name, info)]


def archive_names() -> dict[str, list[str]]:
    return {name: [c.name for c in table.columns] for name, table in schema.metadata.tables.items()}


def archive_missing(sections: list[Section]) -> list[str]:
    """Tables the page has no section for, and columns their section's table lacks."""
    by_heading = {section.heading: set(section.codes) for section in sections}
    missing = []
    for table, columns in archive_names().items():
        if table not in by_heading:
            missing.append(table)
            continue
        missing += [f"{table}.{c}" for c in columns if c not in by_heading[table]]
    return missing


def test_the_cli_reference_has_every_command_and_flag(built_site: Path) -> None:
    sections = page_sections(built_page(built_site, "reference/cli"))
    assert flags_missing(sections) == {}
    commands = [path for path, _, _ in evalq_commands()]
    assert len(commands) > 15 and "evalq run" in commands, commands


def test_the_metric_flags_of_run_and_rank_are_in_the_cli_reference(built_site: Path) -> None:
    """Added by MetricCommand.get_params when asked, not by decorators: the page must ask."""
    from evalq.core.options import flag_fields, flag_name

    metric = {flag_name(name) for name, _, _ in flag_fields()}
    assert len(metric) > 5, metric
    by_heading = {
        s.heading: s.words() for s in page_sections(built_page(built_site, "reference/cli"))
    }
    for command in ("evalq run", "evalq rank"):
        assert [f for f in sorted(metric) if not flag_shown(f, by_heading[command])] == []


def test_the_cli_check_finds_a_missing_flag_and_a_missing_command(built_site: Path) -> None:
    sections = page_sections(built_page(built_site, "reference/cli"))
    run = next(s for s in sections if s.heading == "evalq run")
    run.text = [text.replace("--template", "--tmpl") for text in run.text]
    assert flags_missing(sections) == {"evalq run": ["--template"]}
    sections.remove(next(s for s in sections if s.heading == "evalq status"))
    assert flags_missing(sections)["evalq status"] == ["(no section)"]


def setting_headings(sections: list[Section]) -> set[str]:
    """The variables the page's headings name (a field read from two variables names both)."""
    return {name for s in sections for name in s.heading.split(" / ")}


def test_the_settings_reference_has_a_section_for_every_variable(built_site: Path) -> None:
    page = built_page(built_site, "reference/settings")
    sections = page_sections(page)
    headings = setting_headings(sections)
    wanted = setting_variables()
    assert {"EVALQ_REDIS_URL", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"} <= set(wanted)
    assert names_not_in(wanted, headings) == []
    assert names_not_in(wanted, headings - {"EVALQ_TURN_WAIT_S"}) == ["EVALQ_TURN_WAIT_S"]
    assert 'id="evalq_redis_url"' in page and 'id="gemini_api_key"' in page
    turn_wait = next(s for s in sections if s.heading == "EVALQ_TURN_WAIT_S").words()
    assert "Default: 0.2" in turn_wait and "Type: number" in turn_wait, turn_wait


def test_every_setting_says_what_it_means() -> None:
    """The meanings live in the settings model, one docstring a field, as the page shows."""
    bare = [
        name for name, info in Settings.model_fields.items() if not (info.description or "").strip()
    ]
    assert bare == []


def test_the_redis_key_reference_has_every_key(built_site: Path) -> None:
    codes = page_codes(page_sections(built_page(built_site, "reference/redis-keys")))
    wanted = every_key_shape()
    assert "evalq:job:{job}:verdicts:{line}" in wanted
    assert names_not_in(wanted, codes) == []
    # A shape that is a prefix of others is still checked as itself.
    assert names_not_in(wanted, codes - {"evalq:job:{job}"}) == ["evalq:job:{job}"]


def test_the_archive_reference_has_every_table_and_column(built_site: Path) -> None:
    sections = page_sections(built_page(built_site, "reference/archive-schema"))
    assert "archive_rows" in archive_names()
    assert archive_missing(sections) == []
    assert "archive_alembic_version" in page_codes(sections)


def test_the_archive_check_finds_a_missing_table_and_column(built_site: Path) -> None:
    sections = page_sections(built_page(built_site, "reference/archive-schema"))
    rows = next(s for s in sections if s.heading == "archive_rows")
    rows.codes.remove("score")
    sections.remove(next(s for s in sections if s.heading == "archive_verdicts"))
    assert archive_missing(sections) == ["archive_rows.score", "archive_verdicts"]


def test_the_python_api_reference_documents_the_package_exports(built_site: Path) -> None:
    import evalq

    headings = page_headings(page_sections(built_page(built_site, "reference/python-api")))
    assert names_not_in(evalq.__all__, headings) == []
    assert names_not_in(["Job", "made_up"], headings) == ["made_up"]


def api_entries(html: str) -> dict[str, str]:
    """The Python API page cut at each documented object's heading (h2 a function or class,
    h3 a method), keyed by its last name (`evaluate`, `Job.wait`)."""
    parts = re.split(
        r'<h[23] id="evalq\.[\w.]*?\.((?:[A-Z]\w*\.)?\w+)" class="doc doc-heading"', html
    )
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_python_api_shows_parameters_as_tables_and_evaluate_once(built_site: Path) -> None:
    """Parameters in a table per function (Google `Args:` rendered with docstring_section_style
    table), and `evaluate` with one signature, not one per @overload."""
    import evalq

    entries = api_entries(built_page(built_site, "reference/python-api"))
    assert entries["evaluate"].count("doc-signature") == 1
    tabled = re.compile(r'doc-section-title">Parameters:</span>\s*</p>\s*<table')
    functions = [n for n in evalq.__all__ if not n[0].isupper()]
    assert [n for n in functions if not tabled.search(entries[n])] == []
    assert not tabled.search('<p><span class="doc-section-title">Parameters:</span></p><ul>')


def test_the_site_is_built_in_strict_mode() -> None:
    config = yaml.safe_load(Path(ROOT, "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    assert config["validation"]["links"]["not_found"] == "warn"  # a warning fails strict
    assert config["validation"]["nav"]["omitted_files"] == "warn"


def test_each_generated_page_holds_its_marker() -> None:
    for page, name in PAGES.items():
        text = Path(ROOT, "docs", page).read_text(encoding="utf-8")
        assert f"<!-- generated: {name} -->" in text, page
        assert "<!-- generated:" not in expand(text, page)


def test_a_page_without_its_marker_or_with_an_unknown_one_fails_the_build() -> None:
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="lacks its marker"):
        expand("# Settings\n", "reference/settings.md")
    with pytest.raises(PluginError, match="no generator for nonsense"):
        expand("<!-- generated: nonsense -->", "guides/comparing.md")


def test_the_cli_reference_tables_each_option_with_its_type_and_default(built_site: Path) -> None:
    page = built_page(built_site, "reference/cli")
    run = page.split('id="evalq-run"', 1)[1].split("<h", 1)[0]
    priority = re.search(r"<td><code>--priority</code></td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", run)
    assert priority is not None, "no --priority row in evalq run's table"
    assert "<code>low</code>" in priority.group(1) and priority.group(2) == "<code>normal</code>"
    assert "<code>--map FIELD=COLUMN</code>" in run
    assert "Sentinel" not in page and "None</td>" not in page


def test_an_option_shows_a_default_only_when_it_has_one() -> None:
    ctx = click.Context(click.Command("x"))

    def default(*decls: str, **kwargs: Any) -> str:
        return cli_page.shown_default(click.Option(list(decls), **kwargs), ctx)

    assert default("--wait", is_flag=True) == ""
    assert default("--cache/--no-cache", default=True) == "on"
    assert default("--map", multiple=True) == ""
    assert default("--name") == ""
    assert default("--mode", default="online") == "`online`"
    assert default("--limit", default=0) == "`0`"
