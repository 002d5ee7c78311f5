"""Where a batch goes: the Gemini API (a JSONL file through its Files API, results keyed by
each line's `key`) or Vertex AI (JSONL in Cloud Storage, keyed by request labels), behind one
interface; the ledger, sweep, retries and accounting are the same for both."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from google import genai
from google.genai import types

from evalq.worker.batch import reading
from evalq.worker.batch.reading import BatchView, ResultEntry
from evalq.worker.batch.wire import file_line


class BatchBackend(Protocol):
    """One batch service. Every method is safe to call again after a crash."""

    client: genai.Client

    def request_line(self, inlined: types.InlinedRequest) -> str:
        """One request as a line of the JSONL file the service reads, carrying its key."""
        ...

    def create(self, model: str, requests: Path, display_name: str) -> tuple[str, str]:
        """Send the requests file and create the batch; its (name, state) on the server."""
        ...

    def get(self, name: str) -> BatchView: ...

    def list(self, max_items: int) -> Iterator[BatchView]:
        """The account's batches, newest first: how one made before a crash is found."""
        ...

    def results(self, view: BatchView, max_bytes: int) -> Iterator[ResultEntry]:
        """Every result of a finished batch, in whatever order the service gives them;
        TooLarge past max_bytes."""
        ...

    def ignored_objects(self, view: BatchView) -> Sequence[str]:
        """Objects found beside the batch's results that are not the service's own results
        files: never read, only named (in `evalq status`)."""
        ...

    def cancel(self, name: str) -> None: ...


class GeminiApiBackend:
    """The Gemini Developer API's Batch API: Files API in, a results file (or, for a file
    batch the service chose to answer inline, inlined responses keyed by metadata) out."""

    def __init__(self, client: genai.Client) -> None:
        self.client = client

    def request_line(self, inlined: types.InlinedRequest) -> str:
        return file_line(self.client, inlined)

    def create(self, model: str, requests: Path, display_name: str) -> tuple[str, str]:
        upload = types.UploadFileConfig(mime_type="application/jsonl", display_name=display_name)
        uploaded = self.client.files.upload(file=requests, config=upload)
        if uploaded.name is None:
            raise RuntimeError("the Files API gave the uploaded requests no name")
        config = types.CreateBatchJobConfig(display_name=display_name)
        made = self.client.batches.create(model=model, src=uploaded.name, config=config)
        state = made.state.value if made.state is not None else "JOB_STATE_UNSPECIFIED"
        return str(made.name), state.removeprefix("JOB_STATE_")

    def get(self, name: str) -> BatchView:
        return reading.get_batch(self.client, name)

    def list(self, max_items: int) -> Iterator[BatchView]:
        return reading.list_batches(self.client, max_items)

    def results(self, view: BatchView, max_bytes: int) -> Iterator[ResultEntry]:
        if view.responses_file is None:
            yield from reading.inline_results(view.inlined or [])
            return
        with (
            self._downloaded(view.responses_file, max_bytes) as path,
            path.open("r", encoding="utf-8", errors="replace") as lines,
        ):
            yield from reading.file_results(lines)

    def ignored_objects(self, view: BatchView) -> Sequence[str]:
        return []  # the results come as one file the batch names (dest.fileName), or inline

    @contextmanager
    def _downloaded(self, name: str, max_bytes: int) -> Iterator[Path]:
        """The results file streamed to disk by the SDK (bounded), then read line by line."""
        with tempfile.TemporaryDirectory(prefix="evalq-results-") as folder:
            path = Path(folder) / "results.jsonl"
            sink = reading.BoundedSink(path, max_bytes)
            try:
                self.client.files.download(file=name, destination=sink)
            finally:
                sink.close()
            yield path

    def cancel(self, name: str) -> None:
        self.client.batches.cancel(name=name)
