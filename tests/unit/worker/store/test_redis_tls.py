"""rediss:// URLs: the Store (redis-py), the broker (kombu) and the result backend (Celery) get
the same TLS options from the settings, so a bare rediss:// URL checks Redis's certificate in
all three; a URL with its own ssl_* parameters keeps them; TLS settings without rediss:// are
refused by name."""

from __future__ import annotations

import ssl

import pytest
import redis
from pydantic import ValidationError

from evalq.worker.celery_app.app import create_app
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from evalq.worker.store.redis_tls import tls_options

URL = "rediss://:pw@redis.internal:6380/0"


def test_a_bare_rediss_url_checks_the_certificate_against_the_given_ca() -> None:
    settings = Settings(redis_url=URL, redis_tls_ca="/etc/evalq/ca.pem")
    wanted = {"ssl_cert_reqs": ssl.CERT_REQUIRED, "ssl_ca_certs": "/etc/evalq/ca.pem"}
    assert tls_options(settings) == wanted
    app = create_app(settings)
    assert app.conf.broker_use_ssl == wanted
    assert app.conf.redis_backend_use_ssl == wanted
    # What kombu and Celery's backend will connect with, built as they build it.
    with app.connection_for_write() as conn:
        assert conn.ssl == wanted
    backend_params = app.backend.connparams
    assert backend_params["connection_class"] is redis.SSLConnection
    assert backend_params["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    assert backend_params["ssl_ca_certs"] == "/etc/evalq/ca.pem"
    pool = Store.from_settings(settings).r.connection_pool
    assert pool.connection_class is redis.SSLConnection
    assert pool.connection_kwargs["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    assert pool.connection_kwargs["ssl_ca_certs"] == "/etc/evalq/ca.pem"


def test_without_a_ca_the_system_cas_check_it_and_a_client_certificate_goes_along() -> None:
    settings = Settings(redis_url=URL, redis_tls_cert="/c.pem", redis_tls_key="/k.pem")
    assert tls_options(settings) == {
        "ssl_cert_reqs": ssl.CERT_REQUIRED,
        "ssl_certfile": "/c.pem",
        "ssl_keyfile": "/k.pem",
    }
    # Celery's backend, which refuses a rediss:// URL without ssl_cert_reqs, is given it.
    assert create_app(settings).backend.connparams["ssl_cert_reqs"] == ssl.CERT_REQUIRED


def test_plain_redis_and_urls_with_their_own_parameters_get_nothing_from_the_settings() -> None:
    assert tls_options(Settings(redis_url="redis://127.0.0.1:6379/0")) is None
    app = create_app(Settings(redis_url="redis://127.0.0.1:6379/0"))
    assert not app.conf.broker_use_ssl
    own = Settings(redis_url=URL + "?ssl_cert_reqs=required&ssl_ca_certs=/x/ca.pem")
    assert tls_options(own) is None
    pool = Store.from_settings(own).r.connection_pool
    assert pool.connection_kwargs["ssl_ca_certs"] == "/x/ca.pem"


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"redis_tls_ca": "/ca.pem"}, "EVALQ_REDIS_TLS_CA set, but EVALQ_REDIS_URL is not"),
        ({"redis_url": URL, "redis_tls_cert": "/c.pem"}, "EVALQ_REDIS_TLS_CERT and"),
    ],
)
def test_tls_settings_that_cannot_apply_are_refused_by_name(
    fields: dict[str, str], said: str
) -> None:
    with pytest.raises(ValidationError, match=said):
        Settings(**fields)  # type: ignore[arg-type]
