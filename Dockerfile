FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evalq ./evalq
COPY worker ./worker
COPY tasks ./tasks
COPY fake_gemini ./fake_gemini
RUN pip install --no-cache-dir . && useradd --create-home evalq
USER evalq
ENTRYPOINT ["evalq"]
CMD ["worker"]
