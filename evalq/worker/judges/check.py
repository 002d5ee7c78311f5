"""Before a worker takes work: can it reach a judge at all? A worker with none would take every
row it is given and fail each one after its retries, so `evalq worker` refuses to start, with
one line naming what is missing."""

from __future__ import annotations

import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from evalq.core.secret_urls import mask_url
from evalq.worker.settings import Settings

CHECK_TIMEOUT_S = 5.0  # how long a base URL has to answer
PREFIX = "evalq worker: "
NO_JUDGE = (
    "no judge to ask: set GEMINI_API_KEY (Gemini API), or GOOGLE_GENAI_USE_VERTEXAI=true with "
    "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (Vertex AI), or EVALQ_GEMINI_BASE_URL "
    "(the fake server: evalq fake-gemini)"
)

# Each returns None when it succeeded, else why not (one line, no secret).
Probe = Callable[[str, float], str | None]
FindCredentials = Callable[[], str | None]


def judge_problem(
    settings: Settings,
    *,
    probe: Probe | None = None,
    find_credentials: FindCredentials | None = None,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> str | None:
    """None when the worker has a judge to ask; else the one line to print (prefixed).

    Checked in the order make_client builds the client: Vertex AI (its project and location,
    then a Vertex API key or application-default credentials), else EVALQ_GEMINI_BASE_URL
    answering any HTTP response within `timeout_s` (a refused connection tried again until
    then, so a judge started beside the worker gets those seconds), else a Gemini API key.
    Only presence is checked: a key Google refuses is found on the first call."""
    problem = _problem(settings, probe or answers, find_credentials or adc_problem, timeout_s)
    return None if problem is None else PREFIX + " ".join(problem.split())


def _problem(
    settings: Settings, probe: Probe, find_credentials: FindCredentials, timeout_s: float
) -> str | None:
    has_key = settings.api_key is not None and bool(settings.api_key.get_secret_value().strip())
    if settings.use_vertexai:
        if (missing := vertex_settings_problem(settings)) is not None:
            return missing
        vertex_key = settings.vertex_api_key
        if (
            not (vertex_key and vertex_key.get_secret_value().strip())
            and (error := find_credentials()) is not None
        ):
            return (
                f"Vertex AI: no application-default credentials ({error}): run `gcloud auth "
                "application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service "
                "account key file, or EVALQ_VERTEX_API_KEY to a Vertex API key"
            )
    base_url = (settings.gemini_base_url or "").strip()
    if base_url:
        error = probe(base_url, timeout_s)
        if error is None:
            return None
        return (
            f"the judge at EVALQ_GEMINI_BASE_URL={shown_url(base_url)} does not answer "
            f"({error}): start it (the fake server: evalq fake-gemini), or correct or unset "
            "EVALQ_GEMINI_BASE_URL"
        )
    if settings.use_vertexai or has_key:
        return None
    return NO_JUDGE


def vertex_settings_problem(settings: Settings) -> str | None:
    """On Vertex AI, the one line naming the project or region setting that is missing (None
    when both are set, or when Vertex AI is not used): every Vertex route is under them, so
    nothing can be judged, or checked against Cloud Storage, without them."""
    if not settings.use_vertexai:
        return None
    missing = [
        name
        for name, value in (
            ("GOOGLE_CLOUD_PROJECT", settings.vertex_project),
            ("GOOGLE_CLOUD_LOCATION", settings.vertex_location),
        )
        if not (value or "").strip()
    ]
    if not missing:
        return None
    return (
        f"Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) needs {' and '.join(missing)}: set "
        f"{'them' if len(missing) > 1 else 'it'} (a project id; a region such as "
        "us-central1), or unset GOOGLE_GENAI_USE_VERTEXAI and set GEMINI_API_KEY "
        "(Gemini API)"
    )


def shown_url(url: str) -> str:
    """The URL without user, password, query or fragment: what may be printed of it."""
    try:
        parts = urllib.parse.urlsplit(mask_url(url))  # a password split as masking splits it
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(not a URL)"
    if ":" in host:
        host = f"[{host}]"
    return urllib.parse.urlunsplit((parts.scheme, host + port, parts.path, "", ""))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer: it is not followed."""

    def redirect_request(self, *_: object, **__: object) -> None:
        return None


def answers(url: str, timeout_s: float) -> str | None:
    """None when an HTTP request to `url` gets any HTTP response within `timeout_s`; else the
    last error. Connection errors are tried again every 0.2 s until then."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return "not an http:// or https:// URL"
    opener = urllib.request.build_opener(_NoRedirects)
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            with opener.open(urllib.request.Request(url, method="GET"), timeout=max(0.1, left)):
                return None
        except urllib.error.HTTPError:
            return None  # a status line came back: something answers there
        except (OSError, ValueError) as exc:  # URLError, timeouts, resets, a bad port
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            error = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
        if time.monotonic() + 0.2 >= deadline:
            return f"{error}, for {timeout_s:g} s"
        time.sleep(0.2)


def adc_problem() -> str | None:
    """None when google.auth finds application-default credentials, else why not."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        google.auth.default()
    except DefaultCredentialsError as exc:
        return str(exc).rstrip(".") or type(exc).__name__
    return None
