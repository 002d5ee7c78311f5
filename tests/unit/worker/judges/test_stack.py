"""The judge layers come in the one order LAYERS gives, whatever order they were made in."""

from __future__ import annotations

import pytest

from evalq.core.judge import Judge
from evalq.worker.judges.stack import LAYERS, Layer, _in_order


def _tagged(name: str) -> Layer:
    def layer(inner: Judge) -> Judge:
        return inner

    layer.__name__ = name
    return layer


def test_layers_are_put_in_the_order_of_layers_whatever_the_order_made() -> None:
    made = {kind: _tagged(kind.__name__) for kind in reversed(LAYERS[:4])}
    assert [layer.__name__ for layer in _in_order(made)] == [k.__name__ for k in LAYERS[:4]]


def test_a_layer_layers_does_not_name_is_refused() -> None:
    class Stray:
        model = "m"

    with pytest.raises(ValueError, match="Stray"):
        _in_order({Stray: _tagged("stray")})  # type: ignore[dict-item]
