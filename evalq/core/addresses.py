"""Whether a listening address reaches beyond this host: the metrics endpoint and the fake
server have no login, so binding one of them wider than loopback is worth a warning."""

from __future__ import annotations

import ipaddress


def beyond_loopback(host: str) -> bool:
    """True for any address but a loopback one: the wildcards ("", 0.0.0.0, ::) and every
    name other than localhost count, since a name may resolve to any interface."""
    if host.strip().lower() in ("localhost", "localhost."):
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True
