"""The fake server's behaviour knobs: the CLI flags and the ``running_server`` keywords carry
the same names, and a bad value fails here, before anything is served."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypedDict

from evalq.fake_gemini.realism import BatchRealism


@dataclass(frozen=True)
class ServerOptions:
    """Behaviour knobs; the CLI flags and ``run_server`` keywords carry the same names."""

    latency_ms: float = 0.0
    rpm: int | None = None
    rpd: int | None = None
    fault_rate: float = 0.0
    seed: int = 0
    script: str | Path | None = None
    slow_fault_ms: float = 2000.0
    # The per-minute quota is enforced over this sliding window, scaled (rpm * window / 60
    # requests per window): tests exceed a quota in seconds instead of minutes.
    quota_window_s: float = 60.0
    # How long a batch stays PENDING, and then RUNNING, before it is answered (POST
    # /batch-delay changes it while the server runs, for batches already in flight too).
    batch_delay_s: float = 0.0
    # Batch realism switches (evalq.fake_gemini.realism) on from the start: a BatchRealism or its
    # JSON form ({"reorder": true, "late_output": 3}). POST /batch-realism replaces them and
    # POST /reset brings these back.
    batch_realism: BatchRealism | Mapping[str, object] | None = None
    # The simulated judge answers as SIMULATED_MODEL_VERSION + "@" + this (still read as
    # simulated): the same alias answering as another version, as real models do over time.
    # POST /model-version changes it and POST /reset brings this back.
    model_version_suffix: str | None = None

    @classmethod
    def from_args(cls, args: object) -> ServerOptions:
        """Every knob from an object that carries them under the same names (the CLI's parsed
        arguments)."""
        return cls(**{knob.name: getattr(args, knob.name) for knob in fields(cls)})

    def __post_init__(self) -> None:
        BatchRealism.parse(self.batch_realism)  # a bad switch fails here, before serving
        if self.quota_window_s <= 0:
            raise ValueError("quota_window_s must be > 0")
        if self.batch_delay_s < 0:
            raise ValueError("batch_delay_s must be >= 0")
        if self.latency_ms < 0 or self.slow_fault_ms < 0:
            raise ValueError("latency_ms and slow_fault_ms must be >= 0")
        for name in ("rpm", "rpd"):
            limit = getattr(self, name)
            if limit is not None and limit < 1:
                raise ValueError(f"{name} must be a positive integer, got {limit}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be within 0..1, got {self.fault_rate}")
        check_suffix(self.model_version_suffix)


def check_suffix(suffix: str | None) -> None:
    """A version suffix is a short plain word: it goes into every reply's modelVersion."""
    if suffix is not None and not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", suffix):
        raise ValueError(
            f"model_version_suffix must be 1-64 letters, digits, '.', '_' or '-', got {suffix!r}"
        )


class ServerOptionsArgs(TypedDict, total=False):
    """``ServerOptions`` as keyword arguments, so callers never build the dataclass by hand."""

    latency_ms: float
    rpm: int | None
    rpd: int | None
    fault_rate: float
    seed: int
    script: str | Path | None
    slow_fault_ms: float
    quota_window_s: float
    batch_delay_s: float
    batch_realism: BatchRealism | Mapping[str, object] | None
    model_version_suffix: str | None
