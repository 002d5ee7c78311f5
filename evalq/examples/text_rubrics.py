"""A small dataset for the rubric metric that evalq can score offline: prompts answered by a careful
and a careless "model", so a judge that checks the tests passes more of the careful one's; one
row carries its own tests in Vertex's rubric_groups form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalq.examples.datasets import write_rows

RUBRIC_FILE = "rubric.jsonl"
# The two "models" of the example, each a column (`--candidates careful,careless`).
RUBRIC_CANDIDATES = ("careful", "careless")

ROWS: list[dict[str, Any]] = [
    {
        "id": "tides",
        "prompt": "Explain to a child why the sea has tides, in under 40 words.",
        "careful": "The Moon pulls on the sea, so the sea bulges toward it. As the Earth "
        "spins, the beach passes the bulge and the water rises and falls. That is a tide.",
        "careless": "Water goes up and down because of weather and boats and stuff, and "
        "sometimes the wind blows very hard so it gets higher, especially in winter when "
        "storms come in from far away over the ocean for many days",
    },
    {
        "id": "bees",
        "prompt": "List three jobs that worker honeybees do in the hive.",
        "careful": "Worker honeybees share the hive's work:\n- Cleaning cells and feeding "
        "larvae.\n- Building comb and guarding the entrance.\n- Foraging for nectar and pollen.",
        "careless": "Bees make honey.",
    },
    {
        "id": "refund",
        "prompt": "A customer asks when their refund arrives. Reply politely.",
        "context": "Refunds are paid within 5 working days of the return being received.",
        "careful": "Thank you for your patience. Your refund is paid within 5 working days "
        "of us receiving your return.",
        "careless": "Refunds take ages, stop asking, idiot.",
        "rubric_groups": {
            "support_rubrics": {
                "group_id": "support-v1",
                "display_name": "Support replies",
                "rubrics": [
                    {
                        "rubric_id": "days",
                        "content": {"property": {"description": "The response mentions 5."}},
                        "importance": "HIGH",
                        "type": "CONTENT",
                    },
                    {
                        "rubric_id": "polite",
                        "content": {
                            "property": {
                                "description": "The response contains no abusive language."
                            }
                        },
                        "importance": "MEDIUM",
                        "type": "SAFETY",
                    },
                ],
            }
        },
    },
]


def write_rubric_example(folder: Path) -> Path:
    """The example dataset, written into ``folder``; run it with `--candidates careful,careless`
    (or `--map response=careful` for one model)."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_rows(folder / RUBRIC_FILE, ROWS)
