"""Small datasets for pointwise, pairwise and ranking jobs that evalq can score offline: answers
of clearly different quality about short passages (given as a `context` column, a text file or
a one-page PDF), so a judge that reads its inputs rates the faithful, on-topic ones higher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.examples.datasets import write_rows

POINTWISE_FILE = "pointwise.jsonl"
POINTWISE_CANDIDATES_FILE = "pointwise-candidates.jsonl"
# The two "models" of the candidates example: the faithful summary and the poor one.
POINTWISE_CANDIDATES = ("faithful", "poor")
PAIRWISE_FILE = "pairwise.jsonl"
RANK_FILE = "rank.jsonl"
DOCS_DIR = "docs"

TIDES = (
    "Tides are the regular rise and fall of sea level caused mainly by the gravitational pull "
    "of the Moon, with a smaller contribution from the Sun. Most coasts see two high tides and "
    "two low tides each lunar day, which lasts about 24 hours and 50 minutes. When the Sun, "
    "Moon and Earth line up at new and full moon, their pulls combine to produce larger spring "
    "tides. At the quarter moons the pulls partly cancel, giving smaller neap tides. The shape "
    "of a coastline and the depth of the sea floor can amplify the range, as in the Bay of "
    "Fundy, where high and low water can differ by more than fifteen metres."
)
BEES = (
    "Honeybee colonies are organised around a single queen, thousands of female workers and, "
    "in summer, a few hundred male drones. Workers change jobs as they age: young bees clean "
    "cells and feed larvae, middle-aged bees build comb and guard the entrance, and the oldest "
    "bees forage for nectar and pollen. Foragers share the location of rich flowers through the "
    "waggle dance, in which the angle of the run encodes direction relative to the sun and its "
    "duration encodes distance. Nectar is turned into honey by adding enzymes and evaporating "
    "water until the sugar concentration is about eighty percent. A strong colony can store "
    "more than twenty kilograms of honey to survive the winter."
)
VOLCANOES = (
    "Volcanoes form where molten rock, called magma, reaches the surface. Most occur along "
    "plate boundaries: at mid-ocean ridges plates pull apart and magma fills the gap, while at "
    "subduction zones one plate sinks beneath another and melting feeds explosive volcanoes "
    "such as those around the Pacific Ring of Fire. Hotspot volcanoes, like those of Hawaii, "
    "form over plumes of hot mantle far from plate edges. How explosive an eruption is depends "
    "largely on the silica and gas content of the magma: runny basalt lava flows gently, while "
    "sticky, gas-rich magma can shatter into ash. Scientists monitor earthquakes, ground "
    "swelling and gas emissions to forecast eruptions."
)
LIGHTHOUSES = (
    "Early lighthouses burned wood or coal in open fires, which were dim and hard to tell "
    "apart. The Fresnel lens, introduced in 1823, used rings of glass prisms to bend scattered "
    "light into a single horizontal beam visible for more than twenty miles. Each lighthouse "
    "was given its own pattern of flashes, called its characteristic, so sailors could "
    "identify it at night. Most lighthouses are now automated, and satellite navigation has "
    "made many of them a backup rather than the main aid to ships."
)


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, text: str, *, width: int = 90) -> Path:
    """A one-page PDF showing ``text`` in Helvetica, uncompressed (so its text is readable by
    any PDF reader, including the simulated judge's)."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    body = "BT /F1 11 Tf 14 TL 50 780 Td\n" + "".join(
        f"({_pdf_escape(line)}) Tj T*\n" for line in lines
    )
    body += "ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
        "/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(body.encode('latin-1'))} >>\nstream\n{body}\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{obj}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("latin-1")
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode("latin-1")
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode("latin-1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def write_documents(dest: Path) -> tuple[Path, Path]:
    """The example documents: bees as text, volcanoes as PDF (relative to ``dest``)."""
    docs = dest / DOCS_DIR
    docs.mkdir(parents=True, exist_ok=True)
    bees = docs / "honeybees.txt"
    bees.write_text(BEES + "\n", encoding="utf-8")
    return bees, write_pdf(docs / "volcanoes.pdf", VOLCANOES)


# Per source: its id, the prompt, where the passage is given (a context column or a document
# file), the faithful summary and the poor one (invented, off-topic or padded).
_POINTWISE_SOURCES: tuple[tuple[str, str, dict[str, str], str, str], ...] = (
    (
        "tides",
        "Summarise the passage in two sentences.",
        {"context": TIDES},
        "Tides are the rise and fall of sea level caused mainly by the Moon's gravitational "
        "pull, with most coasts seeing two high and two low tides each lunar day. Spring tides "
        "are larger when the Sun, Moon and Earth line up, neap tides smaller at the quarter "
        "moons, and coastline shape can amplify the range.",
        "Ocean waves are driven by strong afternoon winds. Sailors prefer calm winter weather, "
        "and storms usually arrive without warning.",
    ),
    (
        "bees",
        "Summarise the document for a beginner beekeeper.",
        {"document": f"{DOCS_DIR}/honeybees.txt"},
        "A honeybee colony has one queen, thousands of female workers and some male drones. "
        "Workers change jobs as they age, from feeding larvae to building comb to foraging, and "
        "foragers share flower locations through the waggle dance. Nectar becomes honey as "
        "enzymes are added and water evaporates, and a strong colony stores honey to survive "
        "the winter.",
        "Bees bees bees are are nice nice nice and and make make things",
    ),
    (
        "volcanoes",
        "Summarise the document in three sentences.",
        {"document": f"{DOCS_DIR}/volcanoes.pdf"},
        "Volcanoes form where magma reaches the surface, mostly along plate boundaries such as "
        "mid-ocean ridges and subduction zones, and also over hotspots like Hawaii. How "
        "explosive an eruption is depends on the silica and gas content of the magma. "
        "Scientists forecast eruptions by monitoring earthquakes, ground swelling and gas "
        "emissions.",
        "Mountains grow slowly because glaciers push rocks upward every century. Climbers enjoy "
        "them. Tourism brings money to nearby villages.",
    ),
)


def write_pointwise_example(dest: str | Path) -> Path:
    """Summaries to rate with --template summarization_quality: each source has a faithful
    summary (id ...-good) and a poor one (...-bad)."""
    dest = Path(dest)
    write_documents(dest)
    rows = [
        {"id": f"{source}-{quality}", "prompt": prompt, **passage, "response": response}
        for source, prompt, passage, good, bad in _POINTWISE_SOURCES
        for quality, response in (("good", good), ("bad", bad))
    ]
    return write_rows(dest / POINTWISE_FILE, rows)


def write_pointwise_candidates_example(dest: str | Path) -> Path:
    """The pointwise example as two models on the same prompts: each source's faithful
    summary in column `faithful` and its poor one in `poor`, one row per source, for
    `evalq run pointwise --candidates faithful,poor` and then `evalq compare JOB`."""
    dest = Path(dest)
    single = write_pointwise_example(dest)
    rows: dict[str, dict[str, Any]] = {}
    for line in single.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        source, _, quality = record.pop("id").rpartition("-")
        response = record.pop("response")
        row = rows.setdefault(source, {"id": source, **record})
        row["faithful" if quality == "good" else "poor"] = response
    return write_rows(dest / POINTWISE_CANDIDATES_FILE, list(rows.values()))


def write_pairwise_example(dest: str | Path) -> Path:
    """Question-answer pairs: in rows a-better-* response_a is the better answer, in
    b-better-* response_b is, and in same-* both answers say the same thing."""
    dest = Path(dest)
    write_documents(dest)
    rows = [
        {
            "id": "a-better-tides",
            "prompt": "Why are spring tides larger than neap tides?",
            "context": TIDES,
            "response_a": (
                "Spring tides are larger because at new and full moon the Sun, Moon and Earth "
                "line up and their pulls combine, while at the quarter moons the pulls partly "
                "cancel, giving smaller neap tides."
            ),
            "response_b": "Because the water is warmer in spring, so it expands.",
        },
        {
            "id": "b-better-bees",
            "prompt": "How do foragers tell other bees where flowers are?",
            "document": f"{DOCS_DIR}/honeybees.txt",
            "response_a": "They leave a trail of scent on the ground for others to follow.",
            "response_b": (
                "Foragers perform the waggle dance: the angle of the run encodes the direction "
                "of the flowers relative to the sun, and its duration encodes the distance."
            ),
        },
        {
            "id": "a-better-volcanoes",
            "prompt": "What makes some volcanic eruptions explosive?",
            "document": f"{DOCS_DIR}/volcanoes.pdf",
            "response_a": (
                "Explosiveness depends largely on the silica and gas content of the magma: "
                "sticky, gas-rich magma can shatter into ash, while runny basalt lava flows "
                "gently."
            ),
            "response_b": "Volcanoes explode when it rains a lot.",
        },
        {
            "id": "b-better-lighthouses",
            "prompt": "What did the Fresnel lens change for lighthouses?",
            "context": LIGHTHOUSES,
            "response_a": "It made lighthouses cheaper to paint.",
            "response_b": (
                "Introduced in 1823, the Fresnel lens used rings of glass prisms to bend "
                "scattered light into a single horizontal beam visible for more than twenty "
                "miles."
            ),
        },
        {
            "id": "same-lighthouses",
            "prompt": "How could sailors identify a lighthouse at night?",
            "context": LIGHTHOUSES,
            "response_a": "Each lighthouse had its own pattern of flashes, its characteristic.",
            "response_b": "Its characteristic: each lighthouse had its own pattern of flashes.",
        },
    ]
    return write_rows(dest / PAIRWISE_FILE, rows)


# Answers written under three guidance prompts, as in the seed notebook's prompt comparison:
# terse (one short sentence), moderate (a brief, sourced answer) and cited (a thorough answer
# quoting the passage).
_RANK_ROWS: tuple[tuple[str, str, str, str, str, str], ...] = (
    (
        "tides",
        "What causes tides, and why do spring and neap tides differ?",
        TIDES,
        "The Moon.",
        "Tides are caused mainly by the Moon's gravitational pull; spring tides are larger "
        "because the Sun and Moon line up.",
        "Tides are caused mainly by the gravitational pull of the Moon, with a smaller "
        "contribution from the Sun. At new and full moon the Sun, Moon and Earth line up and "
        "their pulls combine to produce larger spring tides; at the quarter moons the pulls "
        "partly cancel, giving smaller neap tides.",
    ),
    (
        "tides-range",
        "Why is the tidal range so large in some places?",
        TIDES,
        "Geography.",
        "The shape of a coastline and the depth of the sea floor can amplify the range.",
        "The passage explains that the shape of a coastline and the depth of the sea floor "
        "can amplify the tidal range. Its example is the Bay of Fundy, where high and low "
        "water can differ by more than fifteen metres.",
    ),
    (
        "bees-jobs",
        "How do worker bees' jobs change as they age?",
        BEES,
        "They do different things.",
        "Young workers clean cells and feed larvae, and the oldest forage.",
        "Workers change jobs as they age: young bees clean cells and feed larvae, "
        "middle-aged bees build comb and guard the entrance, and the oldest bees forage for "
        "nectar and pollen.",
    ),
    (
        "bees-honey",
        "How is nectar turned into honey?",
        BEES,
        "Bees process it.",
        "Bees add enzymes to nectar and evaporate water from it.",
        "Nectar is turned into honey by adding enzymes and evaporating water until the sugar "
        "concentration is about eighty percent; a strong colony can store more than twenty "
        "kilograms of honey to survive the winter.",
    ),
    (
        "volcanoes-where",
        "Where do volcanoes form?",
        VOLCANOES,
        "In some places.",
        "Volcanoes mostly form along plate boundaries, and also over hotspots.",
        "Volcanoes form where magma reaches the surface: most occur along plate boundaries, at "
        "mid-ocean ridges where plates pull apart and at subduction zones where one plate "
        "sinks beneath another, and hotspot volcanoes like those of Hawaii form over plumes of "
        "hot mantle far from plate edges.",
    ),
    (
        "lighthouses-auto",
        "What role do lighthouses play today?",
        LIGHTHOUSES,
        "Less than before.",
        "Most lighthouses are now automated and serve as a backup to satellite navigation.",
        "Most lighthouses are now automated, and satellite navigation has made many of them a "
        "backup rather than the main aid to ships, although each still shows its own pattern "
        "of flashes, its characteristic, so sailors can identify it at night.",
    ),
)


def write_rank_example(dest: str | Path) -> Path:
    """Rows with columns terse, moderate and cited: answers of clearly different quality
    (terse ones barely answer) for `evalq rank --candidates terse,moderate,cited`."""
    dest = Path(dest)
    rows = [
        {
            "id": row_id,
            "prompt": question,
            "context": context,
            "terse": terse,
            "moderate": moderate,
            "cited": cited,
        }
        for row_id, question, context, terse, moderate, cited in _RANK_ROWS
    ]
    return write_rows(dest / RANK_FILE, rows)
