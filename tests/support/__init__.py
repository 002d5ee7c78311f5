"""Helpers the tests share, each defined once (tests/unit/test_test_helpers.py checks it):
writing datasets and reading them back (datasets.py), images (images.py), running the `evalq`
command and scraping its exporter (cli.py), jobs submitted together and waited on (jobs.py), a
scratch Redis database and jobs planted in it (scratch.py; the `scratch_url` and `store`
fixtures in tests/conftest.py), the in-memory judge (judges.py, with the check that a judge
tells an example from its near miss) and cache (memory_kv.py) for metric unit tests, a row run
through plan / run_unit / aggregate (contexts.py), judges' replies as the prompts ask for them
(rating_replies.py, gecko_rubrics.py, grounding.py) and as Gemini sent them (recorded.py,
gemini_replies.py), job configs, summaries and results built by hand or compared across runs
(job_configs.py, summaries.py, results.py), an isolated stack per test (stack.py), the
in-process task runner (task_runner.py), the in-process fake server (fake_http.py) and a
misbehaving HTTP media server (hostile_http.py). The processes the integration tests start
(Redis, workers, the fake server) come from devtools.local, the harness the demo and the
benchmark use too."""
