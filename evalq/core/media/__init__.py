"""A row's media: parsed from a dataset cell by the producer, turned into checked bytes by a
worker, and counted in tokens by the dry run."""

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
