"""Which addresses a media URL may reach: public ones only, unless the deployment allows private
ones; a worker fetches inside the deployment's network, where a URL could reach Redis or a cloud
metadata service."""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from dataclasses import dataclass

from evalq.core.errors import InputError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFUSED = "refused address"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# Host names of cloud metadata services, refused before any lookup.
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
# Their addresses (AWS, ECS, GCP, Azure, Oracle, Alibaba): refused even when private ones are
# allowed. Link-local ranges are refused as a whole as well.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "100.100.100.200",
        "fd00:ec2::254",
        "fd20:ce::254",
    )
)


@dataclass(frozen=True)
class NetworkRules:
    """Which addresses a job's URLs may reach beyond the public internet (EVALQ_MEDIA_ALLOW_PRIVATE,
    EVALQ_MEDIA_ALLOW_NETWORKS). Cloud metadata and link-local addresses are refused always."""

    allow_private: bool = False
    allow_networks: tuple[str, ...] = ()  # CIDRs, e.g. ("10.1.2.0/24",)

    def refusal(self, address: IPAddress) -> str | None:
        """Why an address may not be fetched from, or None."""
        ip = _embedded_ipv4(address) or address
        if ip in METADATA_ADDRESSES or ip.is_link_local:
            return "a link-local or cloud metadata address"
        if ip.is_multicast or ip.is_unspecified:
            return "a multicast or unspecified address"
        if self.allow_private or any(
            ip in ipaddress.ip_network(net, strict=False) for net in self.allow_networks
        ):
            return None
        if ip.is_loopback:
            return "a loopback address"
        if ip.is_private:
            return "a private address"
        if not ip.is_global:
            return "not a public address"
        return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64): it is where packets go."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True)
class Target:
    """One URL, taken apart."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # with the query


def parse_url(url: str, rules: NetworkRules, row_id: str, field: str) -> Target:
    """Check what can be checked without the network: the scheme, the host, a literal address.
    The producer calls this at submit; the worker again, then checks what the host resolves to."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(row_id, field, f"{url} is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InputError(row_id, field, f"{url}: only http(s) URLs are fetched")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise InputError(row_id, field, f"{url} has no host")
    try:
        host = host.encode("idna").decode("ascii")  # the name DNS and Host: carry
    except UnicodeError:
        raise InputError(row_id, field, f"{url}: {host!r} is not a valid host name") from None
    if host in METADATA_HOSTS:
        raise InputError(row_id, field, f"GET {url}: {REFUSED}: {host} is a cloud metadata service")
    if (literal := literal_address(host)) is not None:
        check_address(url, host, literal, rules, row_id, field)
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    path = urllib.parse.quote(path, safe="!#$%&'()*+,/:;=?@[]~")  # spaces, non-ASCII: escaped
    return Target(url, scheme, host, port or (443 if scheme == "https" else 80), path)


def literal_address(host: str) -> IPAddress | None:
    """The address a host written as one stands for, legacy IPv4 forms included (127.1,
    0x7f.0.0.1, 2130706433 all reach 127.0.0.1)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host.replace(".", "").replace("x", "").isalnum():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            pass
    return None


def check_address(
    url: str, host: str, address: IPAddress, rules: NetworkRules, row_id: str, field: str
) -> None:
    if (why := rules.refusal(address)) is not None:
        hint = "" if "metadata" in why or "multicast" in why else " (EVALQ_MEDIA_ALLOW_PRIVATE)"
        raise InputError(row_id, field, f"GET {url}: {REFUSED}: {host} is {why}{hint}")
