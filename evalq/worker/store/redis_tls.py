"""TLS to Redis from one place, so the three clients of a rediss:// URL agree.

A bare rediss:// URL meant three different things: redis-py (the Store) checked Redis's
certificate, kombu (the broker) warned and checked nothing, and Celery's result backend refused
to start without `ssl_cert_reqs` in the URL. evalq therefore gives all three the same options,
built here from the settings: Redis's certificate is always checked (against
EVALQ_REDIS_TLS_CA, else the system's CAs), with a client certificate when one is set.

A URL that states its own `ssl_*` query parameters keeps them, for all three, and gets nothing
from here: whoever wrote them chose on purpose.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evalq.worker.settings import Settings


def tls_options(settings: Settings) -> dict[str, Any] | None:
    """The ssl_* connection options for redis-py, kombu (broker_use_ssl) and Celery's backend
    (redis_backend_use_ssl); None when the URL is not rediss:// or names its own."""
    parts = urlsplit(settings.redis_url)
    if parts.scheme != "rediss":
        return None
    if any(name.startswith("ssl_") for name in parse_qs(parts.query)):
        return None
    options: dict[str, Any] = {"ssl_cert_reqs": ssl.CERT_REQUIRED}
    if settings.redis_tls_ca:
        options["ssl_ca_certs"] = settings.redis_tls_ca
    if settings.redis_tls_cert:
        options["ssl_certfile"] = settings.redis_tls_cert
        options["ssl_keyfile"] = settings.redis_tls_key
    return options
