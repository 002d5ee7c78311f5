"""A job over TLS, with real processes: a private redis-server that speaks only TLS (its
certificate signed by a CA made here), one real worker and the client, all given a bare
rediss:// URL and EVALQ_REDIS_TLS_CA. Without the CA the certificate is refused: the
connection is checked, not merely encrypted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import redis

from devtools.local import (
    RedisServer,
    WorkerPool,
    free_port,
    start_fake_gemini,
    start_redis,
    stop,
)
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.support.shapes import shapes_dataset
from tests.support.stack import worker_env

pytestmark = pytest.mark.integration


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def certificates(folder: Path) -> Path:
    """A CA, and a certificate for 127.0.0.1 it signed (redis.pem, redis.key); returns the CA."""
    folder.mkdir(parents=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=evalq test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=folder)  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "redis.key", "-out", "redis.csr", cwd=folder)  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "redis.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "redis.pem",
            cwd=folder)  # fmt: skip
    return folder / "ca.pem"


def start_tls_redis(folder: Path, certs: Path) -> tuple[RedisServer, str]:
    """A redis-server that speaks only TLS; returns it and its bare rediss:// URL."""
    port = free_port()
    tls = ["--port", "0", "--tls-port", str(port),
           "--tls-cert-file", str(certs / "redis.pem"), "--tls-key-file", str(certs / "redis.key"),
           "--tls-ca-cert-file", str(certs / "ca.pem"), "--tls-auth-clients", "no"]  # fmt: skip
    checked = (
        f"rediss://127.0.0.1:{{port}}/0?ssl_cert_reqs=required&ssl_ca_certs={certs / 'ca.pem'}"
    )
    server = start_redis(folder, port=port, extra_args=tls, url=checked)
    return server, f"rediss://127.0.0.1:{port}/0"


def test_a_job_runs_over_tls_and_an_unknown_certificate_is_refused(tmp_path: Path) -> None:
    if shutil.which("openssl") is None or shutil.which("redis-server") is None:
        pytest.skip("needs openssl and redis-server")
    ca = certificates(tmp_path / "certs")
    server, url = start_tls_redis(tmp_path / "redis", ca.parent)
    fake = start_fake_gemini()
    pool = WorkerPool(worker_env(url, fake.url, EVALQ_REDIS_TLS_CA=str(ca)), tmp_path / "logs")
    try:
        pool.start(concurrency=4)
        from evalq.client import Client

        settings = Settings(
            redis_url=url, redis_tls_ca=str(ca), gemini_base_url=fake.url, api_key=None
        )
        client = Client(settings)
        data = shapes_dataset(tmp_path / "data", 6, own_questions=True)
        summary = client.wait(client.submit("gecko-image", data).job_id, timeout_s=180)
        assert summary.status == "finished"
        assert summary.rows_done == 6
        assert len(client.results(summary.job_id)) == 6
        assert "insecure SSL" not in pool.logs()  # kombu's fallback to no certificate check
        # The system's CAs don't know this one: the same URL without it is refused.
        untrusting = Store.from_settings(Settings(redis_url=url))
        with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
            untrusting.ping()
    finally:
        pool.stop_all()
        stop(fake.proc)
        if server.proc is not None:
            stop(server.proc)
