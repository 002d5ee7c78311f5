"""A fake Gemini REST server, so evalq runs and is tested end to end without network or keys:
this module builds the app from the route modules around the state
(evalq.fake_gemini.serving runs it)."""

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
    """Build the app; a bad script raises ScriptError here, before any port is bound. The API
    key is accepted (header or ``?key=``) and never read, so it can't reach logs or /stats."""
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
