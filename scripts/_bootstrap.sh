# Sourced by scripts/demo and scripts/test: make .venv with evalq installed, on a fresh machine too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${EVALQ_PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  echo "evalq: creating .venv with $PY" >&2
  "$PY" -m venv .venv
fi
STAMP=.venv/.evalq-installed
HASH="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$HASH" ]; then
  echo "evalq: installing dependencies into .venv" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[dev]"
  echo "$HASH" > "$STAMP"
fi
# The report tests render pages in headless Chromium (Debian's package); install it when it is
# missing and we can (root with apt-get), else those tests skip and say why.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "evalq: installing chromium for the report tests" >&2
  apt-get install -y chromium >&2 || echo "evalq: chromium not installed; report browser tests will skip" >&2
fi
export PATH="$ROOT/.venv/bin:$PATH"
