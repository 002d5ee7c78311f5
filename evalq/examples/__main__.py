"""`python -m evalq.examples METRIC FOLDER`: write a metric's example dataset (and its images,
videos or documents) into FOLDER and print the dataset's path, so a tutorial or a first try runs
on data that exists, on any machine, before one's own."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from evalq.examples.calibration import write_calibration_example
from evalq.examples.gecko import write_gecko_image_example
from evalq.examples.grounding import write_groundedness_example
from evalq.examples.ratings import (
    write_pairwise_example,
    write_pointwise_candidates_example,
    write_pointwise_example,
    write_rank_example,
)
from evalq.examples.text_rubrics import write_rubric_example
from evalq.examples.video import write_gecko_video_example

# Each example by what it holds (its metric is in the printed file's name: pointwise.jsonl...).
WRITERS: dict[str, Callable[[Path], Path]] = {
    "images": write_gecko_image_example,  # gecko-image
    "videos": write_gecko_video_example,  # gecko-video
    "grounding": write_groundedness_example,  # groundedness
    "summaries": write_pointwise_example,  # pointwise --template summarization_quality
    "two-summarisers": write_pointwise_candidates_example,  # pointwise --candidates faithful,poor
    "answer-pairs": write_pairwise_example,  # pairwise
    "three-answers": write_rank_example,  # rank --candidates terse,moderate,cited
    "rated-summaries": write_calibration_example,  # calibrate --human rater
    "text-rubrics": write_rubric_example,  # rubric --candidates careful,careless
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m evalq.examples",
        description="Write an example dataset and print its path.",
    )
    parser.add_argument("example", choices=sorted(WRITERS))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    print(WRITERS[args.example](args.folder))


if __name__ == "__main__":
    main()
