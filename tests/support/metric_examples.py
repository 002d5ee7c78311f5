"""Every metric's example dataset and the flags `evalq run` (or `evalq rank`) takes with it:
the tests that run every metric in one stack (the archive's, Vertex AI's) submit these."""

from __future__ import annotations

from pathlib import Path

METRICS = (
    "gecko-image",
    "gecko-video",
    "groundedness",
    "pointwise",
    "pairwise",
    "rank",
    "rubric",
)


def metric_examples(folder: Path) -> dict[str, tuple[Path, list[str]]]:
    """Each metric's example dataset, written under `folder`, and its flags."""
    from evalq.examples.gecko import write_gecko_image_example
    from evalq.examples.grounding import write_groundedness_example
    from evalq.examples.ratings import (
        write_pairwise_example,
        write_pointwise_example,
        write_rank_example,
    )
    from evalq.examples.text_rubrics import write_rubric_example
    from evalq.examples.video import write_gecko_video_example

    return {
        "gecko-image": (write_gecko_image_example(folder / "image"), []),
        "gecko-video": (write_gecko_video_example(folder / "video"), []),
        "groundedness": (write_groundedness_example(folder / "grounding"), []),
        "pointwise": (
            write_pointwise_example(folder / "pointwise"),
            ["--template", "summarization_quality"],
        ),
        "pairwise": (write_pairwise_example(folder / "pairwise"), []),
        "rank": (write_rank_example(folder / "rank"), ["--candidates", "terse,moderate,cited"]),
        "rubric": (write_rubric_example(folder / "rubric"), ["--candidates", "careful,careless"]),
    }


def submit_argv(metric: str, dataset: Path, flags: list[str]) -> list[str]:
    """`evalq run METRIC DATASET FLAGS`, or `evalq rank DATASET FLAGS` for rank."""
    command = ["rank", str(dataset)] if metric == "rank" else ["run", metric, str(dataset)]
    return [*command, *flags]
