"""Starting evalq's moving parts as local subprocesses: a private redis-server, a private
PostgreSQL, the fake Gemini server, workers, Flower. Shared by the demo, the benchmark and the
test fixtures, so all three run the same real processes the same way."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import psycopg
import redis

EVALQ = [sys.executable, "-m", "evalq"]
ROOT = Path(__file__).resolve().parent.parent
SECRET_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "EVALQ_VERTEX_API_KEY")
# initdb and postgres refuse to run as root; as root we run them as Debian's system account.
POSTGRES_ACCOUNT = "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(
    predicate: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.1
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout_s: float = 15) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except (redis.RedisError, ValueError):
        return False


@dataclass
class RedisServer:
    """A Redis to run against: one start_redis started (proc set), or one given by URL."""

    url: str
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0

    def client(self) -> redis.Redis:
        """A client of its own, for the tests and tools that look inside Redis directly."""
        return redis.Redis.from_url(self.url, decode_responses=True)


def start_redis(
    folder: Path,
    *,
    appendonly: bool = False,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    url: str | None = None,
) -> RedisServer:
    """A private redis-server on a free port (appendonly for the crash and restart tests).
    `extra_args` go to redis-server (TLS, an ACL file); `url`, with `{port}` in it, is how to
    reach it then (default: plain redis:// as the default user)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed; set EVALQ_REDIS_URL to a running Redis")
    port = port or free_port()
    folder.mkdir(parents=True, exist_ok=True)
    args = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--dir",
        str(folder),
        "--appendonly",
        "yes" if appendonly else "no",
        *extra_args,
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = (url or "redis://127.0.0.1:{port}/0").format(port=port)
    wait_for(lambda: redis_answers(url) or proc.poll() is not None, 15, "redis-server")
    if proc.poll() is not None:
        raise RuntimeError(f"redis-server on port {port} exited with {proc.returncode}")
    return RedisServer(url=url, proc=proc, port=port)


def libpq_url(url: str) -> str:
    """psycopg (libpq) reads plain postgresql:// URLs; evalq and the fixtures hand around
    SQLAlchemy's, which name the driver (postgresql+psycopg://)."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.split("+", 1)[0] in {"postgresql", "postgres"}:
        return f"postgresql://{rest}"
    return url


def postgres_answers(url: str) -> bool:
    """True once the server takes connections: while it starts up, recovers or shuts down it
    refuses them, so this is the readiness check, not just an open port."""
    try:
        with psycopg.connect(libpq_url(url), connect_timeout=1):
            return True
    except psycopg.Error:
        return False


def _version(bindir: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", bindir.parent.name))


def postgres_bindir() -> Path:
    """Where initdb and postgres are. Debian keeps them off PATH, in /usr/lib/postgresql/N/bin,
    and pg_config (libpq-dev) can name a version whose server is not installed, so each place
    counts only if both programs are there."""
    candidates: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        if out:
            candidates.append(Path(out))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version, reverse=True)
    if initdb := shutil.which("initdb"):
        candidates.append(Path(initdb).resolve().parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "postgres").is_file():
            return bindir
    raise RuntimeError(
        "no PostgreSQL server binaries (initdb and postgres) in `pg_config --bindir`, "
        "/usr/lib/postgresql/*/bin or on PATH: run ./scripts/install-system-deps (it installs "
        "Debian's postgresql package), or set EVALQ_TEST_POSTGRES_URL to a running server"
    )


def _postgres_account() -> pwd.struct_passwd | None:
    """The account to run initdb and postgres as: none when we are not root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(POSTGRES_ACCOUNT)
    except KeyError:
        raise RuntimeError(
            f"running as root, and initdb and postgres refuse root, but there is no "
            f"{POSTGRES_ACCOUNT!r} system user to run them as: run ./scripts/install-system-deps "
            f"(Debian's postgresql package creates it)"
        ) from None


def _as_account(account: pwd.struct_passwd | None) -> dict[str, Any]:
    """Popen arguments that drop root in the child itself. Not `runuser`: it stays in between
    as a parent that ignores SIGINT (the postmaster's fast shutdown) and answers SIGTERM by
    SIGKILLing the postmaster two seconds later."""
    if account is None:
        return {}
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


# A Unix socket's path must fit in sockaddr_un (108 bytes on Linux).
_MAX_SOCKET_PATH = 100


@dataclass
class PostgresServer:
    """A PostgreSQL to run against: one start_postgres started (proc and data_dir set), which a
    test may stop and start again, or one given by URL, which is never ours to stop."""

    url: str
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0
    data_dir: Path | None = None
    bindir: Path | None = field(default=None, repr=False)
    log: Path | None = field(default=None, repr=False)
    account: pwd.struct_passwd | None = field(default=None, repr=False)
    # The directory start_postgres made under /tmp, deleted by close(); None when the data
    # lives in a folder the caller gave.
    temp_dir: Path | None = field(default=None, repr=False)

    def _own(self, doing: str) -> tuple[Path, Path]:
        if self.data_dir is None or self.bindir is None:
            raise RuntimeError(
                f"cannot {doing} the PostgreSQL at port {self.port}: start_postgres did not start "
                f"it (a shared server is never stopped by a test; use private_postgres)"
            )
        return self.data_dir, self.bindir

    def start(self, timeout_s: float = 60) -> None:
        """Brings a stopped server back on the same port and data directory, for the tests
        that take PostgreSQL away mid-job; returns once it takes connections (crash recovery
        included). A no-op while it runs."""
        data_dir, bindir = self._own("start")
        if self.proc is not None and self.proc.poll() is None:
            return
        sock = f"{data_dir}/.s.PGSQL.{self.port}"
        # Sockets in the data dir, never the system server's /var/run/postgresql; none at all
        # when the path is too long for one (evalq and the tests connect over TCP anyway).
        sockets = str(data_dir) if len(sock) <= _MAX_SOCKET_PATH else ""
        args = [
            str(bindir / "postgres"),
            "-D",
            str(data_dir),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={sockets}",
            # Tests: a lost OS page cache is no concern; commits still reach the OS, so a
            # killed postmaster keeps them.
            "-c",
            "fsync=off",
        ]
        log = self.log or data_dir.parent / "postgres.log"
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=data_dir.parent,
                **_as_account(self.account),
            )
        self.proc = proc
        wait_for(
            lambda: proc.poll() is not None or postgres_answers(self.url),
            timeout_s,
            f"PostgreSQL on port {self.port}",
        )
        if proc.poll() is not None:
            with log.open("rb") as fh:
                fh.seek(offset)
                tail = fh.read().decode(errors="replace")[-3000:]
            raise RuntimeError(
                f"PostgreSQL on port {self.port} exited with {proc.returncode}:\n{tail}"
            )

    def stop(self, timeout_s: float = 60) -> None:
        """Fast shutdown, as `pg_ctl stop -m fast` does it (SIGINT to the postmaster): clients
        are cut off, a checkpoint is written and the postmaster exits, so the data is intact for
        start(). Returns once the postmaster has exited and the port is free."""
        self._own("stop")
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            # Immediate shutdown: the postmaster still takes its children down with it.
            proc.send_signal(signal.SIGQUIT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """Stops a server start_postgres started for good and deletes the directory it made
        under /tmp; a server given by URL is left alone."""
        if self.data_dir is None:
            return
        self.stop()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def start_postgres(folder: Path | None = None, port: int | None = None) -> PostgresServer:
    """A private PostgreSQL server (trust auth, superuser `postgres`, 127.0.0.1 only, on a free
    port unless `port` is given), for tests that may stop it or need a server no one else
    touches. `folder` gets its log, and its data too unless we are root: then the data dir is
    a fresh one under /tmp owned by the postgres account, which can't enter root's 0700
    pytest folders. close() stops it and deletes that /tmp dir."""
    bindir = postgres_bindir()
    account = _postgres_account()
    temp_dir: Path | None = None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    if account is None and folder is not None:
        home = folder
    else:
        home = temp_dir = Path(tempfile.mkdtemp(prefix="evalq-pg-", dir="/tmp"))
        if account is not None:
            os.chown(home, account.pw_uid, account.pw_gid)
    data_dir = home / "data"
    log = (folder or home) / "postgres.log"
    initdb = subprocess.run(
        [
            str(bindir / "initdb"),
            "-D",
            str(data_dir),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=home,
        check=False,
        **_as_account(account),
    )
    if initdb.returncode != 0:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
        raise RuntimeError(
            f"initdb {data_dir} failed ({initdb.returncode}):\n"
            f"{(initdb.stdout + initdb.stderr)[-3000:]}"
        )
    server = PostgresServer(
        url="", data_dir=data_dir, bindir=bindir, log=log, account=account, temp_dir=temp_dir
    )
    # A free port can be taken between free_port() and the postmaster's bind (other test
    # processes start servers too): then another port, unless the caller chose this one.
    for attempt in range(1 if port else 3):
        server.port = port or free_port()
        server.url = f"postgresql+psycopg://postgres@127.0.0.1:{server.port}/postgres"
        try:
            server.start()
        except (RuntimeError, TimeoutError) as exc:
            server.stop()
            if port or attempt == 2 or "already in use" not in str(exc):
                server.close()
                raise
            continue
        return server
    raise AssertionError("unreachable")


@dataclass
class FakeGeminiProcess:
    url: str
    proc: subprocess.Popen[str]


def start_fake_gemini(
    *args: str, log: Path | None = None, env: Mapping[str, str] | None = None
) -> FakeGeminiProcess:
    """The fake server on a free port; its address read from the line it prints first. With
    `log` its output goes to that file, so it holds no pipe of ours and can outlive this
    process (the demo's --keep). `env`: its environment (STORAGE_EMULATOR_HOST for Vertex AI's
    batch jobs), else this process's."""
    child_env = dict(env) if env is not None else None
    if log is None:
        proc = subprocess.Popen(
            [*EVALQ, "fake-gemini", "--port", "0", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            env=child_env,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
    else:
        with log.open("ab") as handle:
            start = log.stat().st_size
            proc = subprocess.Popen(
                [*EVALQ, "fake-gemini", "--port", "0", *args],
                cwd=ROOT,
                stdout=handle,
                stderr=subprocess.STDOUT,
                text=True,
                env=child_env,
            )
        wait_for(
            lambda: b"\n" in log.read_bytes()[start:] or proc.poll() is not None,
            30,
            "fake-gemini",
        )
        line = log.read_bytes()[start:].decode(errors="replace").splitlines()[0]
    if "listening on" not in line:
        stop(proc)
        raise RuntimeError(f"fake-gemini did not start: {line!r}")
    return FakeGeminiProcess(url=line.split("listening on", 1)[1].split()[0], proc=proc)


def evalq_env(redis_url: str, gemini_url: str | None, **extra: str) -> dict[str, str]:
    """The environment for a child process; against the fake server no key is passed on."""
    env = dict(os.environ)
    if gemini_url is not None:
        for name in SECRET_ENV:
            env.pop(name, None)
        env["EVALQ_GEMINI_BASE_URL"] = gemini_url
    env["EVALQ_REDIS_URL"] = redis_url
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass
class WorkerPool:
    env: Mapping[str, str]
    log_dir: Path
    cwd: Path = ROOT  # the folder the workers start in (a user's own, with its own modules)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list)

    def start(
        self, concurrency: int = 8, name: str | None = None, pool: str | None = None, **env: str
    ) -> subprocess.Popen[bytes]:
        """A worker process; `pool` (gevent or threads) over EVALQ_WORKER_POOL in its env."""
        name = name or f"w{len(self.procs)}-{os.getpid()}"
        logfile = self.log_dir / f"{name}.log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = logfile.open("ab")
        self._logs.append(log)
        cmd = [
            *EVALQ,
            "worker",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}@%h",
            "--loglevel",
            "INFO",
            *(["--pool", pool] if pool else []),
        ]
        proc = subprocess.Popen(
            cmd, cwd=self.cwd, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT
        )
        self.procs.append(proc)
        start = logfile.stat().st_size if logfile.exists() else 0
        wait_for(
            lambda: b"ready." in logfile.read_bytes()[start:] or proc.poll() is not None,
            60,
            f"worker {name}",
        )
        if proc.poll() is not None:
            raise RuntimeError(
                f"worker {name} exited:\n{logfile.read_text(errors='replace')[-3000:]}"
            )
        return proc

    def log_of(self, proc: subprocess.Popen[bytes]) -> str:
        """What one of this pool's workers has logged so far (its --hostname names the file)."""
        args = cast("list[str]", proc.args)
        name = args[args.index("--hostname") + 1].split("@")[0]
        return (self.log_dir / f"{name}.log").read_text(errors="replace")

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("*.log")))

    def stop_all(self, timeout_s: float = 15) -> None:
        """A warm shutdown of each worker (running tasks end first), killed after `timeout_s`."""
        for proc in self.procs:
            stop(proc, timeout_s=timeout_s)
        self.procs.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()


def start_flower(env: Mapping[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalq.worker.celery_app.app",
        "flower",
        f"--port={port}",
        "--address=127.0.0.1",
        "--max_tasks=10000",
    ]
    with log.open("ab") as fh:
        return subprocess.Popen(cmd, cwd=ROOT, env=dict(env), stdout=fh, stderr=subprocess.STDOUT)


@dataclass
class GcsEmulator:
    """A Cloud Storage emulator (gcp-storage-emulator, in memory) at `url`: what
    STORAGE_EMULATOR_HOST names for google-cloud-storage, in the fake server and the workers."""

    url: str
    proc: subprocess.Popen[bytes]
    port: int
    buckets: tuple[str, ...] = ()


def gcs_answers(url: str) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=1):
            return True
    except OSError:
        return False


def start_gcs_emulator(
    log: Path, buckets: Sequence[str] = (), port: int | None = None
) -> GcsEmulator:
    """A private Cloud Storage emulator on a free port, in memory; `buckets` are created in it
    (through the real google-cloud-storage client, as a user would). Its output goes to
    `log`."""
    binary = shutil.which("gcp-storage-emulator") or str(
        Path(sys.executable).parent / "gcp-storage-emulator"
    )
    if not Path(binary).exists():
        raise RuntimeError("gcp-storage-emulator is not installed: pip install -e '.[dev]'")
    port = port or free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [binary, "start", "--host", "127.0.0.1", "--port", str(port), "--in-memory"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: proc.poll() is not None or gcs_answers(url), 30, "gcp-storage-emulator")
    if proc.poll() is not None:
        raise RuntimeError(f"gcp-storage-emulator exited with {proc.returncode}: see {log}")
    if buckets:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        client = storage.Client(
            project="evalq-test",
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": url},
        )
        for bucket in buckets:
            client.create_bucket(bucket)
    return GcsEmulator(url=url, proc=proc, port=port, buckets=tuple(buckets))
