"""Every documented way to start a server listens on 127.0.0.1 or asks for a login: the
README's and the manual's commands, the demo's Flower, docker-compose's published ports and the Dockerfile.
Flower is started for real, as documented, and the kernel's table of listening sockets says
where it listens."""

from __future__ import annotations

import ipaddress
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from devtools.local import ROOT, evalq_env, free_port, start_flower, stop, wait_for
from tests.conftest import RedisServer

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SERVER_COMMAND = re.compile(r"^(celery\b.*\bflower\b|evalq (metrics|fake-gemini)\b)")


def documented_commands() -> list[str]:
    """Commands in the README and the manual (docs/): inline code, and the lines of code blocks
    (fenced, a console block's `$ ` taken off, or indented)."""
    found: list[str] = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        found += re.findall(r"`([^`\n]+)`", text)
        fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
        found += [line.removeprefix("$ ") for block in fenced for line in block.splitlines()]
        found += [line for line in text.splitlines() if line.startswith("    ")]
    return [c.strip().split("  #")[0].strip() for c in found]


def server_commands() -> list[str]:
    return [c for c in documented_commands() if SERVER_COMMAND.match(c)]


def test_every_documented_server_command_binds_loopback_or_asks_for_a_login() -> None:
    from evalq.client.cli.serve import metrics
    from evalq.fake_gemini.serving import DEFAULT_HOST

    commands = server_commands()
    assert any("flower" in c for c in commands)
    for command in commands:
        if "--basic-auth" in command:
            continue
        bound = re.search(r"--(?:address|host)[= ](\S+)", command)
        if "flower" in command:  # Flower's own default is every interface
            assert bound is not None and bound.group(1) in LOOPBACK, command
        else:
            assert bound is None or bound.group(1) in LOOPBACK, command
    host = next(p for p in metrics.params if p.name == "host")
    assert host.default in LOOPBACK
    assert DEFAULT_HOST in LOOPBACK


def test_compose_publishes_on_loopback_only_and_flower_asks_for_a_login() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)
    assert any("--basic-auth=" in str(c) for c in services["flower"]["command"])


def test_dockerfile_publishes_nothing() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "EXPOSE" not in text
    assert "0.0.0.0" not in text


def listening(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Addresses with a socket listening on the port, from /proc/net/tcp and tcp6."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for name in ("tcp", "tcp6"):
        table = Path("/proc/net") / name
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            host, _, hex_port = fields[1].partition(":")
            if fields[3] != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(host)  # each 32-bit word in the host's (little-endian) order
            found.append(
                ipaddress.ip_address(b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4)))
            )
    return found


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
@pytest.mark.parametrize("how", ["readme", "demo"])
def test_flower_as_documented_listens_on_loopback_only(
    how: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    port = free_port()
    env = evalq_env(redis_server.url, None)
    log = tmp_path / "flower.log"
    if how == "readme":
        (command,) = [c for c in server_commands() if "flower" in c]
        argv = [sys.executable, "-m", *shlex.split(command)]
        argv = [re.sub(r"^--port=\d+$", f"--port={port}", a) for a in argv]
        assert f"--port={port}" in argv
        with log.open("ab") as fh:
            proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    else:
        proc = start_flower(env, port, log)  # what scripts/demo.py starts
    try:
        wait_for(lambda: bool(listening(port)) or proc.poll() is not None, 60, "flower to listen")
        assert proc.poll() is None, log.read_text()
        addresses = listening(port)
        assert addresses and all(a.is_loopback for a in addresses), addresses
    finally:
        stop(proc)
