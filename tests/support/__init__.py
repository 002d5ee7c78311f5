"""Helpers the tests share, each defined once: writing datasets (datasets.py), running the
`evalq` command and scraping its exporter (evalq/client/cli), a scratch Redis database and jobs planted
in it (scratch.py; the `scratch_url` and `store` fixtures in tests/conftest.py), the in-memory
judge (judges.py, with the check that a judge tells an example from its near miss) and cache
(memory_kv.py) for metric unit tests, groundedness replies (grounding.py), job summaries built
by hand or compared across runs (summaries.py), an isolated stack per test (stack.py), the
in-process task runner (task_runner.py) and a misbehaving HTTP media server (hostile_http.py).
The processes the integration tests start (Redis, workers, the fake server) come from
devtools.local, the harness the demo and the benchmark use too."""
