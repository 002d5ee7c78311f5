"""The client side: the `Client` that submits jobs, the CLI, the Python API and the report.
It sits on top of the tasks and the runtime; nothing below imports it."""

from evalq.client.client import Client

__all__ = ["Client"]
