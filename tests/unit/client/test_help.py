"""Help that teaches: `evalq --help` lists the commands by task, every command's help ends with
examples, and every example parses against the command it shows, so a renamed flag fails here
rather than in a reader's terminal."""

from __future__ import annotations

import shlex
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from devtools.local import ROOT
from evalq.client.cli import main
from evalq.client.cli.help import EXAMPLES_TITLE, SECTIONS
from evalq.fake_gemini.__main__ import build_parser

COMMANDS = sorted(main.commands)
CLICK_COMMANDS = [name for name in COMMANDS if name != "fake-gemini"]  # argparse's own help


def help_text(*args: str) -> str:
    done = CliRunner().invoke(main, [*args, "--help"], terminal_width=100)
    assert done.exit_code == 0, done.output
    return done.output


def examples_ending(text: str) -> list[str]:
    """The example lines a help text ends with; [] when it does not end with them."""
    lines = text.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == EXAMPLES_TITLE]
    if not starts:
        return []
    shown = [line.strip() for line in lines[starts[-1] + 1 :]]
    return shown if shown and all(line.startswith("evalq ") for line in shown) else []


def test_every_command_is_under_exactly_one_task() -> None:
    placed = [name for names in SECTIONS.values() for name in names]
    assert sorted(placed) == COMMANDS, "place each command under one task in SECTIONS"


def test_evalq_help_lists_the_commands_by_task_in_order() -> None:
    text = help_text()
    positions = [text.index(f"\n{title}:\n") for title in SECTIONS]
    assert positions == sorted(positions)
    for title, names in SECTIONS.items():
        section = text[text.index(f"\n{title}:\n") :].split("\n\n")[0]
        for name in names:
            assert f"\n  {name} " in section, f"{name} is not listed under {title}"


@pytest.mark.parametrize("name", ["", *CLICK_COMMANDS])
def test_each_help_ends_with_examples_that_parse(name: str) -> None:
    shown = examples_ending(help_text(*([name] if name else [])))
    assert 1 <= len(shown) <= 3, f"`evalq {name} --help` does not end with examples"
    assert not name or shlex.split(shown[0])[1] == name, f"the first example is not of {name}"
    for example in shown:
        argv = shlex.split(example)[1:]
        command = main.get_command(click.Context(main), argv[0])
        assert command is not None, example
        with click.Context(main) as parent:
            command.make_context(argv[0], argv[1:], parent=parent)  # UsageError on drift


def test_an_example_with_a_flag_that_does_not_exist_is_caught() -> None:
    run = main.get_command(click.Context(main), "run")
    assert run is not None
    with pytest.raises(click.UsageError), click.Context(main) as parent:
        run.make_context("run", ["pointwise", "a.jsonl", "--no-such-flag"], parent=parent)
    assert examples_ending("Options:\n  --json\n\nExamples:\n  run it\n") == []


def test_the_fake_servers_help_ends_with_examples_that_parse() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalq.fake_gemini", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    shown = examples_ending(done.stdout)
    assert shown and all(line.startswith("evalq fake-gemini ") for line in shown)
    for example in shown:
        build_parser().parse_args(shlex.split(example)[2:])
