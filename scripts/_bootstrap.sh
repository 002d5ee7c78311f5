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
export PATH="$ROOT/.venv/bin:$PATH"
