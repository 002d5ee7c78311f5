"""The shell examples of the manual and the README, read from their Markdown: a `console` block
is run by tests/integration/docs/test_doc_examples.py (its `$ ` lines, a trailing `\\` joining the
next), an `sh` block is not and says why in the `<!-- not run: why -->` line right above it.
Any other shell language, or an `sh` block without a reason, is refused, so an example can't
slip out of the run by being spelled differently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from devtools.local import ROOT

SHELL_LANGUAGES = frozenset({"console", "sh", "bash", "shell", "zsh", "shell-session"})
NOT_RUN = re.compile(r"<!--\s*not run:\s*\S.*-->")
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
EXPECTED_EXIT = re.compile(r"\s+#\s*exits\s+(?P<code>\d+)\s*$")


@dataclass(frozen=True)
class ShellBlock:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    lines: tuple[str, ...]
    reason_not_run: str | None  # the `<!-- not run: ... -->` line above it, if any

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[tuple[str, int]]:
        """(command, expected exit code) per `$ ` line; other lines are shown output."""
        out: list[tuple[str, int]] = []
        joining = False
        for raw in self.lines:
            if joining:
                out[-1] = (out[-1][0][:-1].rstrip() + " " + raw.strip(), out[-1][1])
            elif raw.startswith("$ "):
                out.append((raw[2:].strip(), 0))
            else:
                continue
            joining = out[-1][0].endswith("\\")
            if not joining and (found := EXPECTED_EXIT.search(out[-1][0])):
                out[-1] = (out[-1][0][: found.start()], int(found.group("code")))
        return out


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Fenced:
    line: int  # of the opening fence, 1-based
    info: str  # what follows the opening fence: the language and its attributes
    body: tuple[str, ...]  # the block's lines, the fence's indent taken off
    above: str  # the nearest line above it that is not blank, stripped


def fenced_blocks(page: Path) -> list[Fenced]:
    """Every fenced block of the page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Fenced] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        fence = opened.group("fence")
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        body = tuple(line[len(opened.group("indent")) :] for line in lines[i + 1 : end])
        blocks.append(Fenced(i + 1, opened.group("info").strip(), body, above.strip()))
        i = end + 1
    return blocks


def shell_blocks(page: Path) -> list[ShellBlock]:
    """Every fenced block of a shell language on the page, in order."""
    blocks: list[ShellBlock] = []
    for block in fenced_blocks(page):
        language = block.info.split(" ")[0].lower()
        if language in SHELL_LANGUAGES:
            reason = block.above if NOT_RUN.fullmatch(block.above) else None
            blocks.append(ShellBlock(page, block.line, language, block.body, reason))
    return blocks


_TITLED_PYTHON = re.compile(r'^python\s+title="(?P<path>[^"]+)"')


def page_python_files(page: Path) -> dict[str, str]:
    """The page's Python blocks titled with a file's path (```python title="pkg/mod.py"), by
    path: the code a page shows, run by the test that names the page."""
    found: dict[str, str] = {}
    for block in fenced_blocks(page):
        titled = _TITLED_PYTHON.match(block.info)
        if titled is not None:
            found[titled.group("path")] = "\n".join(block.body) + "\n"
    return found


def misfiled(block: ShellBlock) -> str | None:
    """Why a shell block breaks the rule, or None."""
    if block.language == "console":
        if block.reason_not_run is not None:
            return "a console block is run: an example not to run goes in an `sh` block"
        if not block.commands():
            return "a console block with no `$ ` command"
        return None
    if block.language == "sh":
        return None if block.reason_not_run else "an `sh` block needs `<!-- not run: why -->` above"
    return f"shell examples are `console` (run) or `sh` (not run, with why), not `{block.language}`"


_INDENTED_COMMAND = re.compile(
    r"^ {4}(\$ |evalq |\./scripts/|python |pip |docker|redis-cli |celery )"
)


def indented_commands(page: Path) -> list[int]:
    """Lines of indented (unfenced) code blocks that look like shell commands: the run can't
    tell them apart from prose, so they must be fenced as console or sh."""
    found: list[int] = []
    fence: str | None = None
    previous = ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        opened = _FENCE.match(line)
        if opened is not None:
            fence = (
                None if fence and line.strip().startswith(fence) else fence or opened.group("fence")
            )
        elif (
            fence is None
            and _INDENTED_COMMAND.match(line)
            and not previous.strip().startswith(("-", "*", "1"))
        ):
            found.append(number)
        if line.strip():
            previous = line if not line.startswith("    ") else previous
    return found
