"""Extra skills of the simulated judge, one module per metric.

Each module here exposes ``answer(request: FakeRequest, judge: SeesImages) -> str | None``
and returns None for requests that are not its own (it recognises judge requests by the response
schema's properties or the <untrusted-CODE kind=...> blocks of its metric's prompts, and requests
to the model under test by their system instruction and plain message: evalq.fake_gemini.messages).
SeesImages asks every
skill, in module-name order, before its built-in Gecko image answers. Everything a skill writes
must be deterministic and labelled "[simulated judge]".
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest, SeesImages

Skill = Callable[["FakeRequest", "SeesImages"], "str | None"]
LAST = "gecko_image"  # answers anything, so it is asked after every other skill


@lru_cache(maxsize=1)
def skills() -> tuple[Skill, ...]:
    found: list[Skill] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name == LAST:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        answer = getattr(module, "answer", None)
        if callable(answer):
            found.append(answer)
    return tuple(found)
