"""The Lua scripts spell no key: every key, or the text around a job's id in the keys of jobs a
script finds itself (take_turns.lua), comes in as KEYS or ARGV from evalq.worker.store.keys. A
script that built `evalq:job:` + id + `:turns` itself would go on writing the old names after a
migration renamed them in evalq.worker.store.keys. Read from the files, as a reviewer would grep
them."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from evalq.worker.store import keys
from evalq.worker.store.key_table import every_key_shape
from tests.conftest import ROOT

LITERAL = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")


def lua_files() -> list[Path]:
    found = sorted(p for p in Path(ROOT).rglob("*.lua") if ".venv" not in p.parts)
    assert found, "no Lua script found"
    return found


def key_parts() -> set[str]:
    """Every fixed part of every key (`jobs`, `turns`, `batch_meta`, ...), placeholders aside."""
    return {
        part
        for shape in every_key_shape()
        for part in shape.split(":")
        if part and not part.startswith("{")
    }


def spelled_keys(source: str) -> list[str]:
    """The string literals of a script that spell a key or a piece of one: anything holding the
    prefix `evalq:`, and a key's part with the colon that joins it (`:turns`, `job:`)."""
    parts = key_parts()
    found = []
    for match in LITERAL.finditer(source):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        pieces = [piece for piece in text.split(":") if piece]
        if f"{keys.PREFIX}:" in text or (":" in text and any(p in parts for p in pieces)):
            found.append(text)
    return found


def test_no_lua_script_spells_a_key() -> None:
    spelled = {
        str(path.relative_to(ROOT)): found
        for path in lua_files()
        if (found := spelled_keys(path.read_text(encoding="utf-8")))
    }
    assert spelled == {}


def test_the_check_finds_a_key_spelled_in_a_script() -> None:
    """The check above is not vacuous: the spellings it exists for are caught, and a hash's
    field such as 'failed:' (a counter's name, not a key) is not."""
    assert spelled_keys("redis.call('SCARD', hash .. ':turns')") == [":turns"]
    assert spelled_keys('local k = "evalq:job:" .. id') == ["evalq:job:"]
    assert spelled_keys("redis.call('HINCRBY', KEYS[2], 'failed:' .. ARGV[5], 1)") == []


def test_every_script_the_store_loads_is_a_file_checked_here() -> None:
    shipped = {p.name for p in resources.files("evalq.worker.store").joinpath("lua").iterdir()}
    checked = {p.name for p in lua_files()}
    assert {name for name in shipped if name.endswith(".lua")} <= checked
