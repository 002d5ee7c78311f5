"""All mutable state of one fake server (scripts, quotas, faults, latency, files, batches), kept
on the app under ``STATE``; it lives on one event loop, so it needs no locks."""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress
from dataclasses import dataclass, field

from aiohttp import web

from evalq.core.judge import SIMULATED_MODEL_VERSION
from evalq.fake_gemini.batches import BatchStore
from evalq.fake_gemini.files import FileStore
from evalq.fake_gemini.options import ServerOptions
from evalq.fake_gemini.protocol import Brain
from evalq.fake_gemini.quotas import FaultPicker, Quotas, Stats
from evalq.fake_gemini.realism import BatchRealism
from evalq.fake_gemini.script import Script


def default_brain() -> Brain:
    """The simulated judge, imported late so the server module loads without it."""
    from evalq.fake_gemini.brain import SimulatedJudge

    return SimulatedJudge()


class Latency:
    """The delay before every reply. POST /latency changes it for requests already waiting
    too: a test holds calls open with a long latency, then releases them with 0 once it has
    seen what it waits for, instead of waiting the latency out."""

    def __init__(self, ms: float) -> None:
        self.ms = ms
        self._changed = asyncio.Event()

    def set(self, ms: float) -> None:
        self.ms = ms
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()  # every waiter looks at the new latency

    async def wait(self) -> None:
        start = time.monotonic()
        while (remaining := start + self.ms / 1000 - time.monotonic()) > 0:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)


@dataclass
class FakeGemini:
    """All mutable server state; it lives on one event loop, so it needs no locks."""

    brain: Brain
    options: ServerOptions
    script: Script
    quotas: Quotas
    faults: FaultPicker
    latency: Latency
    stats: Stats = field(default_factory=Stats)
    files: FileStore = field(default_factory=FileStore)
    batches: BatchStore = field(default_factory=BatchStore)
    # The suffix of the simulated judge's modelVersion now (POST /model-version).
    model_version_suffix: str | None = None

    def __post_init__(self) -> None:
        self.model_version_suffix = self.options.model_version_suffix

    def simulated_version(self) -> str:
        """The modelVersion the simulated judge's replies carry: still read as simulated
        (evalq.worker.judges.gemini checks the prefix), and another version once a suffix is set."""
        suffix = self.model_version_suffix
        return f"{SIMULATED_MODEL_VERSION}@{suffix}" if suffix else SIMULATED_MODEL_VERSION

    def reset(self) -> None:
        """Start over as if freshly started, but keep the current script rules. The batch
        realism switches and the model version go back to those the server was started
        with."""
        self.stats.reset()
        self.quotas.reset()
        self.faults.reset()
        self.script.reset()
        self.files.reset()
        self.batches.reset()
        self.batches.realism = BatchRealism.parse(self.options.batch_realism)
        self.model_version_suffix = self.options.model_version_suffix


STATE: web.AppKey[FakeGemini] = web.AppKey("fake_gemini", FakeGemini)
