"""`evalq status` says where a job's judge is asked, Gemini API or Vertex AI, as its submitter's
settings said (the workers read them alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import bare_env, run_evalq

VERTEX = {
    "GOOGLE_GENAI_USE_VERTEXAI": "true",
    "GOOGLE_CLOUD_PROJECT": "team-project",
    "GOOGLE_CLOUD_LOCATION": "us-central1",
}


@pytest.mark.parametrize(("extra", "backend"), [({}, "Gemini API"), (VERTEX, "Vertex AI")])
def test_status_says_gemini_api_or_vertex_ai(
    scratch_url: str, tmp_path: Path, extra: dict[str, str], backend: str
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"} | extra
    args = ["run", "pointwise", str(data), "--template", "fluency", "--json"]
    ran = run_evalq(env, *args, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    job = json.loads(ran.stdout)["job_id"]
    shown = run_evalq(env | {"COLUMNS": "200"}, "status", job, cwd=tmp_path)
    title = next(line for line in shown.stdout.splitlines() if f"evalq job {job}" in line)
    assert f"· judge gemini-2.5-flash on {backend}" in title
    status = run_evalq(env, "status", job, "--json", cwd=tmp_path)
    assert json.loads(status.stdout)["backend"] == backend
