"""TLS to Redis from one place, so the three clients of a rediss:// URL (redis-py, kombu's
broker, Celery's result backend) agree: left to themselves, each read a bare rediss:// URL
differently (checked, warned and unchecked, refused)."""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evalq.worker.settings import Settings


def tls_options(settings: Settings) -> dict[str, Any] | None:
    """The ssl_* connection options for redis-py, kombu (broker_use_ssl) and Celery's backend
    (redis_backend_use_ssl): Redis's certificate always checked (against EVALQ_REDIS_TLS_CA,
    else the system's CAs), with a client certificate when one is set. None when the URL is
    not rediss://, or names its own ssl_* parameters: whoever wrote them chose on purpose."""
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
