"""A fake Gemini REST server, so evalq runs and is tested end to end without network or keys.

It answers ``POST /{v1|v1beta}/models/{model}:generateContent`` with the shapes the real API
uses (including quota errors the real google-genai client turns into ``ClientError``), and
adds knobs real Gemini does not have: latency, per-model quotas, seeded random faults, a
script of canned answers, and ``/stats`` to check what a run actually sent. Every reply the
brain writes is labelled with ``SIMULATED_MODEL_VERSION`` so it can never pass as real.

The API key is accepted (header or ``?key=``) and deliberately never read: it must not end
up in logs or stats, and aiohttp's access log (which would print the query) is disabled.

This module builds the app from the route modules (evalq.fake_gemini.routes, one per API) around the
state (evalq.fake_gemini.state); evalq.fake_gemini.serving runs it.
"""

from __future__ import annotations

from aiohttp import web

from evalq.fake_gemini.batches import BatchStore
from evalq.fake_gemini.options import ServerOptions
from evalq.fake_gemini.protocol import Brain
from evalq.fake_gemini.quotas import FaultPicker, Quotas
from evalq.fake_gemini.realism import BatchRealism
from evalq.fake_gemini.routes import control, vertex_batches
from evalq.fake_gemini.routes.api import route_api
from evalq.fake_gemini.script import Script, load_script
from evalq.fake_gemini.state import STATE, FakeGemini, Latency, default_brain

# Inline media is sent base64 in the JSON body; real Gemini accepts up to 20 MB of it.
MAX_BODY_BYTES = 64 * 1024 * 1024


def create_app(brain: Brain | None = None, options: ServerOptions | None = None) -> web.Application:
    """Build the app; a bad script raises ScriptError here, before any port is bound."""
    options = options or ServerOptions()
    rules = load_script(options.script) if options.script is not None else []
    state = FakeGemini(
        brain=brain if brain is not None else default_brain(),
        options=options,
        script=Script(rules),
        quotas=Quotas(options.rpm, options.rpd, options.quota_window_s),
        faults=FaultPicker(options.fault_rate, options.seed),
        latency=Latency(options.latency_ms),
        batches=BatchStore(options.batch_delay_s, BatchRealism.parse(options.batch_realism)),
    )
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[STATE] = state
    app.router.add_routes(control.ROUTES)
    vertex_batches.setup(app)  # Vertex AI's batch prediction jobs, through Cloud Storage
    app.router.add_route("*", "/{tail:.*}", route_api)  # last: the Gemini API paths
    return app
