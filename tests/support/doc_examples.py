"""The shell examples of the manual and the README, read from their Markdown: a `console` block
is run by tests/integration/test_doc_examples.py (its `$ ` lines, a trailing `\\` joining the
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


def shell_blocks(page: Path) -> list[ShellBlock]:
    """Every fenced block of a shell language on the page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[ShellBlock] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        fence = opened.group("fence")
        language = opened.group("info").strip().split(" ")[0].lower()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if language in SHELL_LANGUAGES:
            above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            reason = above.strip() if NOT_RUN.fullmatch(above.strip()) else None
            body = tuple(line[len(opened.group("indent")) :] for line in lines[i + 1 : end])
            blocks.append(ShellBlock(page, i + 1, language, body, reason))
        i = end + 1
    return blocks


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
