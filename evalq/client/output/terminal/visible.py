"""The user's and the judge's text made safe to show on a terminal, which obeys what it is sent:
the one function every printer of the command line uses. Standard library only: `evalq status`
draws its table with it and must start fast (it loads no rich)."""

from __future__ import annotations

import re
import unicodedata

# Control characters (C0, DEL, C1: ESC starts a sequence, U+009B is a CSI on some terminals),
# format characters (bidi overrides such as U+202E reorder what follows), lone surrogates (a
# file name's undecodable bytes, which would go out as those raw bytes) and the line and
# paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_JOINERS = frozenset({"\u200c", "\u200d"})  # ZWNJ, ZWJ: shape scripts and emoji, move nothing
_SUSPECT = re.compile(r"[^\x20-\x7e]+")  # runs of what may need a look


def hidden(char: str) -> bool:
    """True for a character `visible` never sends to a terminal as it is."""
    return unicodedata.category(char) in _HIDDEN_CATEGORIES and char not in _JOINERS


def _escape(char: str, as_json: bool) -> str:
    code = ord(char)
    if as_json:
        if code > 0xFFFF:  # JSON spells it as its UTF-16 surrogate pair
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"
    if char == "\r":
        return "\\r"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: object, *, multiline: bool = False, as_json: bool = False) -> str:
    """`text` (any object, as str()) with nothing a terminal would obey: control, format and
    separator characters shown as their escapes, line breaks and tabs folded to spaces (line
    breaks kept with `multiline`). The identity on text that holds none of them. Escapes are
    spelled as `repr` would (`\\x1b`, `\\u202e`); a lone carriage return is always shown, as it
    would write over the line. A backslash is not doubled: a text holding the four characters
    `\\x1b` looks like one holding ESC, and neither sends ESC.

    `as_json` is for a JSON text (a document, or JSON Lines): every hidden character becomes
    its JSON escape, which JSON reads back as the same character, so no value changes; tabs,
    line breaks and carriage returns stay, as they can only be the JSON's own whitespace
    (inside a string JSON holds them escaped)."""
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case, at C speed
        return text

    def shown(match: re.Match[str]) -> str:
        run = match.group()
        if run.isprintable():  # letters of other scripts, emoji: at C speed again
            return run
        out = []
        for i, char in enumerate(run):
            if as_json and char in "\t\n\r":
                out.append(char)  # JSON's own whitespace
            elif char == "\r" and run[i + 1 : i + 2] == "\n":
                continue  # a CRLF is one line break: its LF says it
            elif char == "\n":
                out.append("\n" if multiline else " ")
            elif char == "\t":
                out.append(" ")
            else:
                out.append(_escape(char, as_json) if hidden(char) else char)
        return "".join(out)

    return _SUSPECT.sub(shown, text)


def shown(text: object, *, multiline: bool = False) -> str:
    """`visible(text)` for a rich print or a rich table cell, which read "[...]" as markup:
    escaped for the terminal and for rich both, so it is shown exactly as `visible` spells it
    ("[/]" in a dataset would otherwise end `evalq run` with a MarkupError traceback)."""
    from rich.markup import escape

    return escape(visible(text, multiline=multiline))
