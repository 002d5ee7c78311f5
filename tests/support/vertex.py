"""Vertex AI on the fake server: the environment a client or a worker is given. An express-mode
key stands in for Google credentials: the fake reads none, and with a key the client fetches no
OAuth token (there is no Google to fetch one from)."""

from __future__ import annotations

PROJECT = "evalq-test"
LOCATION = "us-central1"
VERTEX_ENV = {
    "GOOGLE_GENAI_USE_VERTEXAI": "true",
    "GOOGLE_CLOUD_PROJECT": PROJECT,
    "GOOGLE_CLOUD_LOCATION": LOCATION,
    "EVALQ_VERTEX_API_KEY": "fake-vertex-key",
}
