"""The client side: the `Client` that submits jobs, the CLI, the Python API and the report.
It sits on top of the tasks and the runtime; nothing below imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalq.client.client import Client

__all__ = ["Client"]


def __getattr__(name: str) -> Any:
    """`Client` is imported when first asked for: `evalq --help` lives in this package and
    should not load google-genai and Celery to print its commands."""
    if name == "Client":
        from evalq.client.client import Client

        return Client
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
