"""A groundedness judge's reply, written the way the judge prompt asks for it, and the small
apples-and-bananas case the groundedness tests score.

The unit tests hand these replies to the in-memory judge and the integration tests script the
fake server with them; one writer keeps both speaking the reply format the parser reads."""

from __future__ import annotations

import json

CONTEXT = "Apples are red fruits. Bananas are yellow fruits.\nPears grow on trees in cool climates."
QUERY = "What colour are apples and bananas?"
INELIGIBLE_BECAUSE = "it evades"

Label = tuple[str, str, str | None]  # a sentence, its label, the excerpt that supports it

# Sentences of responses to QUERY, labelled as a judge reading CONTEXT labels them.
RED_APPLES: Label = ("Apples are red.", "supported", "Apples are red fruits.")
YELLOW_BANANAS: Label = ("Bananas are yellow.", "supported", "Bananas are yellow fruits.")
COLDS_CURED: Label = ("Apples cure colds.", "unsupported", None)
CLOSING: Label = ("I hope this helps!", "no_rad", None)


def labels(*items: Label, eligible: bool = True) -> str:
    """A labelling reply: one (sentence, label, excerpt or None) per sentence; with
    `eligible=False` the judge says the response does not answer (INELIGIBLE_BECAUSE)."""
    return json.dumps(
        {
            "eligibility_rationale": "it answers the request" if eligible else INELIGIBLE_BECAUSE,
            "eligible": eligible,
            "sentences": [
                {"sentence": s, "label": label, "rationale": "because", "excerpt": excerpt}
                for s, label, excerpt in items
            ],
        }
    )
