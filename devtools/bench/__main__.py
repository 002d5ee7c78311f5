"""``python -m devtools.bench [--scale] ...``: what ``./scripts/bench`` runs."""

from devtools.bench.quick import main

raise SystemExit(main())
