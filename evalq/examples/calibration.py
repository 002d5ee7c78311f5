"""Summaries with a rater's 1-5 rating in column `human`, for `evalq calibrate`: labels built to
agree with the simulated judge in a known way, so the demo and the tests rank two judge setups
(a real judge agrees in its own way)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalq.examples.datasets import write_rows
from evalq.examples.ratings import BEES, LIGHTHOUSES, TIDES, VOLCANOES

CALIBRATION_FILE = "calibration.jsonl"
HUMAN_COLUMN = "human"
# The two judge setups the demo ranks. Under summarization_quality the simulated judge weighs
# support, coverage, relevance and form, and rates the summaries in the rater's order
# (tests/unit/examples check it against fake_gemini's own assessment); fluency looks at form
# alone, so the off-topic summary reads as well as the faithful one and agrees far less.
AGREEING_SETUP = ("summary", {"template": "summarization_quality"})
DISAGREEING_SETUP = ("fluency", {"template": "fluency"})

# (source, passage, prompt, [(kind, rater's rating, summary), ...])
_SOURCES: tuple[tuple[str, str, str, tuple[tuple[str, int | None, str], ...]], ...] = (
    (
        "tides",
        TIDES,
        "Summarise the passage about tides in two sentences.",
        (
            (
                "faithful",
                5,
                "Tides are the rise and fall of sea level caused mainly by the Moon's "
                "gravitational pull, with two high and two low tides each lunar day. Spring "
                "tides are larger when the Sun, Moon and Earth line up, neap tides smaller at "
                "the quarter moons, and coastline shape can amplify the range.",
            ),
            (
                "thin",
                3,
                "Tides follow the Moon.",
            ),
            (
                "fragment",
                2,
                "Tides, Moon.",
            ),
            (
                "off-topic",
                1,
                "Ocean waves are driven by strong afternoon winds. Sailors prefer calm winter "
                "weather, and storms usually arrive without warning.",
            ),
        ),
    ),
    (
        "bees",
        BEES,
        "Summarise the passage about honeybees for a beginner beekeeper.",
        (
            (
                "faithful",
                5,
                "A honeybee colony has one queen, thousands of female workers and some male "
                "drones. Workers change jobs as they age, from feeding larvae to building comb "
                "to foraging, and foragers share flower locations through the waggle dance. "
                "Nectar becomes honey as enzymes are added and water evaporates.",
            ),
            (
                "thin",
                3,
                "A honeybee colony has a single queen and thousands of workers.",
            ),
            (
                "fragment",
                2,
                "Queen, workers.",
            ),
            (
                "off-topic",
                1,
                "Butterflies migrate thousands of kilometres every autumn. Gardeners plant "
                "bright flowers to attract them to their yards.",
            ),
        ),
    ),
    (
        "volcanoes",
        VOLCANOES,
        "Summarise the passage about volcanoes in three sentences.",
        (
            (
                "faithful",
                5,
                "Volcanoes form where magma reaches the surface, mostly along plate boundaries "
                "such as mid-ocean ridges and subduction zones, and also over hotspots like "
                "Hawaii. How explosive an eruption is depends on the silica and gas content of "
                "the magma. Scientists forecast eruptions by monitoring earthquakes, ground "
                "swelling and gas emissions.",
            ),
            (
                "thin",
                3,
                "Volcanoes form where magma reaches the surface.",
            ),
            (
                "fragment",
                2,
                "Magma, plates.",
            ),
            (
                "off-topic",
                1,
                "Mountains grow slowly because glaciers push rocks upward every century. "
                "Climbers enjoy them, and tourism brings money to nearby villages.",
            ),
        ),
    ),
    (
        "lighthouses",
        LIGHTHOUSES,
        "Summarise the passage about lighthouses in two sentences.",
        (
            (
                "faithful",
                5,
                "Early lighthouses burned wood or coal until the Fresnel lens of 1823 bent "
                "their light into a single beam visible for more than twenty miles, and each "
                "was given its own pattern of flashes. Most are now automated, a backup to "
                "satellite navigation.",
            ),
            (
                "thin",
                3,
                "Most lighthouses are now automated.",
            ),
            (
                "fragment",
                2,
                "Lens, flashes.",
            ),
            (
                "off-topic",
                1,
                "Harbours charge fees to every visiting yacht. Fishermen sell their catch at "
                "the quay early in the morning.",
            ),
            # Not rated: the rater's sample left it out, and calibrate counts it so.
            (
                "unrated",
                None,
                "Lighthouses guide ships with light, and the Fresnel lens made their beams "
                "far brighter.",
            ),
        ),
    ),
)


def calibration_rows() -> list[dict[str, Any]]:
    """The example's rows: id SOURCE-KIND, prompt, context, response, and `human` where the
    rater gave one. Each passage has four summaries: faithful (5), true but thin (3), garbled
    but keeping the passage's words (2), fluent about something else (1); one row is left
    unrated, as in any labelled sample, so calibrate has a label to count as left out."""
    rows = []
    for source, passage, prompt, summaries in _SOURCES:
        for kind, rating, response in summaries:
            row: dict[str, Any] = {
                "id": f"{source}-{kind}",
                "prompt": prompt,
                "context": passage,
                "response": response,
            }
            if rating is not None:
                row[HUMAN_COLUMN] = rating
            rows.append(row)
    return rows


def write_calibration_example(dest: str | Path) -> Path:
    """The example as JSONL in ``dest``, for `evalq calibrate FILE --human human ...`."""
    return write_rows(Path(dest) / CALIBRATION_FILE, calibration_rows())
