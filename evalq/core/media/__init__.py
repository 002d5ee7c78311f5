"""A row's media: parsed from a dataset cell by the producer, turned into checked bytes by a
worker, and counted in tokens by the dry run.

- references: a cell read as a media reference, its type sniffed, its bytes loaded;
- gcs: which Cloud Storage objects media may name; network: which addresses a URL may reach;
- fetch: downloading from http(s), bounded; decode: whether the bytes really decode;
- backend: which media the judge's backend can take; tokens: media tokens by Google's rules.
"""

from __future__ import annotations

from evalq.core.media.references import (
    DOCUMENT_TYPES,
    IMAGE_TYPES,
    VIDEO_TYPES,
    MediaPlace,
    MediaRules,
    allowed_types,
    load_media,
    parse_media,
    sniff_mime,
)

__all__ = [
    "DOCUMENT_TYPES",
    "IMAGE_TYPES",
    "VIDEO_TYPES",
    "MediaPlace",
    "MediaRules",
    "allowed_types",
    "load_media",
    "parse_media",
    "sniff_mime",
]
