"""Passwords in URLs (the archive's, Redis's): one reading of where a password is, one mask, used
by every message, log line and error that shows such a URL."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

MASK = "***"
_QUERY_SECRET = re.compile(r"(?i)([?&](?:password|passwd|pass|secret|token)=)[^&#]*")


@dataclass(frozen=True)
class UrlParts:
    """A URL split by the rule above; `password` None when the URL has none."""

    scheme: str
    username: str
    password: str | None
    host: str
    port: int | None
    rest: str  # the path, query and fragment, as written


class UrlError(ValueError):
    """A URL that can not be read unambiguously; its message never quotes the password."""


# Where the password is: between the first `:` after `scheme://` and the LAST `@`. urllib,
# redis-py and kombu split there; SQLAlchemy splits at the first `@`, so evalq hands it the parts
# percent-encoded (evalq.worker.archive.place). Masking to the last `@` hides a password
# whichever `@` a library would split at. A password holding `/`, `?` or `#` can't be read alike
# by every library (urllib ends the host part there): split_url refuses it, the URL masked.


def mask_url(text: str, mask: str = MASK) -> str:
    """`text` with its password (and any password=... in its query) replaced by `mask`; a
    user name stays. Safe on any text: a URL that does not parse is masked all the same."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        at = text.rfind("@")
        masked = text if at < 0 else mask + text[at:]
        return _QUERY_SECRET.sub(lambda m: m.group(1) + mask, masked)
    at = rest.rfind("@")
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        rest = (f"{user}:{mask}" if colon else rest[:at]) + rest[at:]
    return _QUERY_SECRET.sub(lambda m: m.group(1) + mask, f"{scheme}://{rest}")


def url_password(text: str) -> str | None:
    """The password as written in `text` (not decoded), by the rule above."""
    _, sep, rest = text.partition("://")
    at = rest.rfind("@")
    if not sep or at < 0:
        return None
    _, colon, password = rest[:at].partition(":")
    return password if colon else None


def scrub(message: str, *urls: str | None) -> str:
    """`message` with each URL's password gone, as written and decoded, wherever it appears
    (a library's error may quote a part of the URL): for any text built from a secret URL."""
    for url in urls:
        if not url:
            continue
        message = message.replace(url, mask_url(url))
        password = url_password(url)
        if password:
            for form in {password, unquote(password)}:
                message = message.replace(form, MASK)
    return message


def split_url(text: str, forms: str) -> UrlParts:
    """`text` read by the rule above, or UrlError: one line, the URL masked, the forms it
    takes (`forms`) and what to change (the caller names its setting)."""
    scheme, sep, rest = text.partition("://")

    def refused(why: str) -> UrlError:
        return UrlError(
            f"the URL {mask_url(text)!r} can not be read: {why}; it takes {forms} "
            "(percent-encode a / ? # or % in the password: %2F %3F %23 %25)"
        )

    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        raise refused("no scheme:// at its start")
    at = rest.rfind("@")
    userinfo, hostpart = (rest[:at], rest[at + 1 :]) if at >= 0 else (None, rest)
    if userinfo is not None and any(c in userinfo for c in "/?#"):
        raise refused("its user or password holds a / ? or #")
    end = min((i for i in (hostpart.find(c) for c in "/?#") if i >= 0), default=len(hostpart))
    authority, tail = hostpart[:end], hostpart[end:]
    host, port_text = authority, ""
    if authority.startswith("["):
        close = authority.find("]")
        after = authority[close + 1 :] if close >= 0 else ""
        if close < 0 or (after and not after.startswith(":")):
            raise refused("its host [...] is not closed by ]")
        host, port_text = authority[: close + 1], after[1:]
    elif ":" in authority:
        host, _, port_text = authority.partition(":")
    port: int | None = None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise refused("its port is not a number from 1 to 65535")
        port = int(port_text)
    username, password = "", None
    if userinfo is not None:
        username, colon, secret = userinfo.partition(":")
        password = secret if colon else None
    return UrlParts(scheme.lower(), username, password, host, port, tail)
