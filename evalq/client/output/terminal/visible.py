"""The user's and the judge's text made safe to show on a terminal: the one function every
printer of the command line uses (tables, warnings, errors, progress lines, the summary).

Row ids, file names, column names, job names, prompts, responses, explanations and error
messages come from datasets and judges, and a terminal obeys what it is sent: ESC starts an
escape sequence (`ESC ] 0 ; title BEL` retitles the window, `ESC [ 2 J` clears it), a C1 byte
such as U+009B is a CSI of its own on some terminals, a carriage return writes over the line,
and a bidi override (U+202E) reorders what follows it. None of them is sent. Each is shown
as its escape, in Python's spelling, the way `repr` would write it: `\\x1b`, `\\x07`, `\\x9b`,
`\\r`, `\\u202e`. Escaped are:

- every control character (Unicode Cc): C0 (U+0000-U+001F), DEL (U+007F), C1 (U+0080-U+009F);
- every format character (Cf): bidi embeddings, overrides and isolates (U+202A-U+202E,
  U+2066-U+2069), the marks U+200E, U+200F, U+061C, soft hyphens, zero-width spaces, BOMs...,
  except the zero-width joiner and non-joiner (U+200C, U+200D), which shape scripts and emoji
  and move nothing;
- the line and paragraph separators (U+2028, U+2029);
- lone surrogates (a file name's undecodable bytes, U+DC80-U+DCFF), which would otherwise
  go out as the raw bytes they stand for.

Line breaks and tabs are whitespace, not hidden text: in a one-line message or a table cell
(the default) a newline, a CRLF and a tab each become one space, so a cell stays a cell and a
message one line; with `multiline=True` (an error message of several lines, a CSV shown on a
terminal) a newline (or CRLF) stays a line break and a tab still becomes a space. A lone
carriage return is always shown (`\\r`): it would write over what came before it.

Everything else (letters of any script, emoji, box drawing, a backslash) is printed as it is:
on text with none of these characters the function is the identity. A backslash is not
doubled, so a dataset that holds the four characters `\\x1b` looks like one holding ESC; the
bytes never reach the terminal either way. `as_json=True` spells the escapes as JSON does
(`\\u001b`, `\\u202e`): applied to a JSON document, it changes no value.

Pure Python with no import beyond the standard library: `evalq status` draws its table with
it and must start fast (it loads no rich)."""

from __future__ import annotations

import re
import unicodedata

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_JOINERS = frozenset({"\u200c", "\u200d"})  # ZWNJ, ZWJ: shape text, move nothing
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
    breaks kept with `multiline`). The identity on text that holds none of them.

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
    ("[/]" in a dataset once made `evalq run` fail with a MarkupError traceback)."""
    from rich.markup import escape

    return escape(visible(text, multiline=multiline))
