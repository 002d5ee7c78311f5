"""Skills of the simulated judge, one module per metric, asked in module-name order between the
noisy judge and the Gecko image skill; docs/architecture/fake-server.md says how each answers."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest, SeesImages

Skill = Callable[["FakeRequest", "SeesImages"], "str | None"]
FIRST = "noisy"  # answers only a text carrying odds, which a test set to be drawn from
LAST = "gecko_image"  # answers anything, so it is asked after every other skill


@lru_cache(maxsize=1)
def skills() -> tuple[Skill, ...]:
    """Each module's ``answer(request, judge) -> str | None``, in module-name order; it returns
    None for requests that are not its own."""
    found: list[Skill] = []
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    for name in sorted(names, key=lambda name: (name != FIRST, name)):
        if name == LAST:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        answer = getattr(module, "answer", None)
        if callable(answer):
            found.append(answer)
    return tuple(found)
