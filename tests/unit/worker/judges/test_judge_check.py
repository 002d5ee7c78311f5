"""The worker's start-up check of its judge (evalq.worker.judges.check): each setting it reads, one
line for each thing missing, and a real HTTP probe of a base URL (a local server that answers,
a port nothing listens on)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from devtools.local import free_port
from evalq.worker.judges.check import NO_JUDGE, PREFIX, answers, judge_problem, shown_url
from evalq.worker.settings import Settings


def settings_with(**fields: Any) -> Settings:
    """Settings with no way to a judge but `fields`: nothing leaks in from the environment."""
    base: dict[str, Any] = {
        "api_key": None,
        "vertex_api_key": None,
        "use_vertexai": False,
        "vertex_project": None,
        "vertex_location": None,
        "gemini_base_url": None,
    }
    return Settings(**{**base, **fields})


def never(*_: Any) -> str | None:
    raise AssertionError("not asked")


def check(s: Settings, **kw: Any) -> str | None:
    kw.setdefault("probe", never)
    kw.setdefault("find_credentials", never)
    return judge_problem(s, **kw)


def test_nothing_set_names_every_way_to_a_judge() -> None:
    line = check(settings_with())
    assert line == PREFIX + NO_JUDGE
    for name in ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        assert name in line
    assert "EVALQ_GEMINI_BASE_URL" in line and "evalq fake-gemini" in line


def test_a_key_is_enough_and_a_blank_one_is_none() -> None:
    assert check(settings_with(api_key=SecretStr("k-123"))) is None
    assert check(settings_with(api_key=SecretStr("  "))) == PREFIX + NO_JUDGE


def test_a_base_url_is_probed_and_its_error_named_without_credentials() -> None:
    url = "http://user:s3cret@judge.example:8765/v1?key=abc"
    assert check(settings_with(gemini_base_url=url), probe=lambda _u, _t: None) is None
    asked: list[tuple[str, float]] = []

    def refused(u: str, t: float) -> str:
        asked.append((u, t))
        return "ConnectionRefusedError: [Errno 111] Connection refused, for 5 s"

    line = check(settings_with(gemini_base_url=url, api_key=SecretStr("k-123")), probe=refused)
    assert asked == [(url, 5.0)]  # the URL wins over a key: it is where calls go
    assert line is not None and line.startswith(PREFIX)
    assert "EVALQ_GEMINI_BASE_URL=http://judge.example:8765/v1 does not answer" in line
    assert "[Errno 111] Connection refused" in line and "evalq fake-gemini" in line
    assert "s3cret" not in line and "abc" not in line and "k-123" not in line
    assert "\n" not in line


@pytest.mark.parametrize(
    ("project", "location", "missing"),
    [
        ("p", None, "needs GOOGLE_CLOUD_LOCATION: set it"),
        (None, "us-central1", "needs GOOGLE_CLOUD_PROJECT: set it"),
        (None, " ", "needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION: set them"),
    ],
)
def test_vertex_needs_project_and_location(
    project: str | None, location: str | None, missing: str
) -> None:
    line = check(settings_with(use_vertexai=True, vertex_project=project, vertex_location=location))
    assert line is not None and f"Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) {missing}" in line


def test_vertex_needs_credentials() -> None:
    vertex = settings_with(use_vertexai=True, vertex_project="p", vertex_location="us-central1")
    assert check(vertex, find_credentials=lambda: None) is None
    line = check(vertex, find_credentials=lambda: "File /x.json was not found")
    assert line is not None
    assert "no application-default credentials (File /x.json was not found)" in line
    assert "gcloud auth application-default login" in line
    assert "GOOGLE_APPLICATION_CREDENTIALS" in line


def on_fake_vertex(**fields: Any) -> Settings:
    """Vertex AI against the fake server, with a Vertex API key unless `fields` say otherwise."""
    base: dict[str, Any] = {
        "use_vertexai": True,
        "vertex_project": "p",
        "vertex_location": "us-central1",
        "gemini_base_url": "http://127.0.0.1:8765",
        "vertex_api_key": SecretStr("vertex-key"),
    }
    return settings_with(**{**base, **fields})


def test_vertex_project_and_location_are_checked_before_a_base_url() -> None:
    """Against the fake server too: without them the client builds no Vertex route."""
    for field, name in (("vertex_location", "LOCATION"), ("vertex_project", "PROJECT")):
        line = check(on_fake_vertex(**{field: None}))  # neither probed nor credentials sought
        assert line is not None and f"needs GOOGLE_CLOUD_{name}: set it" in line
        assert "\n" not in line


def test_vertex_with_a_vertex_key_needs_no_adc_and_its_base_url_is_probed() -> None:
    """EVALQ_VERTEX_API_KEY stands for ADC there; a Gemini API key does not."""
    vertex = on_fake_vertex()
    assert check(vertex, probe=lambda _u, _t: None) is None
    line = check(vertex, probe=lambda _u, _t: "ConnectionRefusedError")
    assert line is not None and "does not answer" in line and "vertex-key" not in line
    gemini_key = on_fake_vertex(vertex_api_key=None, api_key=SecretStr("a Gemini API key"))
    line = check(gemini_key, find_credentials=lambda: "no ADC")  # the probe is never reached
    assert line is not None and "no application-default credentials (no ADC)" in line
    assert "EVALQ_VERTEX_API_KEY" in line


def test_shown_url_keeps_scheme_host_port_path() -> None:
    assert shown_url("https://a:b@h.example/x?k=1#f") == "https://h.example/x"
    assert shown_url("http://[::1]:8765") == "http://[::1]:8765"


class _Teapot(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(418 if self.path == "/" else 302)
        self.send_header("Location", "http://127.0.0.1:1/")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def http_url() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Teapot)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_any_http_answer_counts_and_a_redirect_is_not_followed(http_url: str) -> None:
    assert answers(http_url, 2.0) is None  # 418
    assert answers(http_url + "/elsewhere", 2.0) is None  # 302 to a closed port


def test_a_closed_port_a_bad_scheme_and_a_bad_name_do_not_count() -> None:
    error = answers(f"http://127.0.0.1:{free_port()}", 0.5)
    assert error is not None and "Connection refused" in error and error.endswith("for 0.5 s")
    assert answers("ftp://127.0.0.1/", 0.5) == "not an http:// or https:// URL"
    assert answers("http://no-such-host.invalid/", 0.3) is not None
