FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evalq ./evalq
RUN pip install --no-cache-dir . && useradd --create-home evalq
USER evalq
ENTRYPOINT ["evalq"]
CMD ["worker"]
