"""Which listening addresses reach beyond this host (the servers without a login warn)."""

from __future__ import annotations

import pytest

from evalq.core.addresses import beyond_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"])
def test_loopback_addresses_stay_quiet(host: str) -> None:
    assert not beyond_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "", "10.0.0.5", "192.168.1.2", "fe80::1", "metrics.internal"]
)
def test_wildcards_interfaces_and_names_reach_beyond(host: str) -> None:
    assert beyond_loopback(host)
