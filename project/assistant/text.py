"""The one form in which the assistant compares text: `normalize` (NFKC, case-folded, trimmed, whitespace
runs collapsed to one space, never deleted). Imports nothing of the package, so `notes` (loading, search)
and `ranking` (the terms of a text) both build on it without importing each other.
"""
import functools
import re
import unicodedata

WHITESPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=8192)  # the same note sentences are compared for every question
def normalize(text: str) -> str:
    """The form used only for comparing: NFKC, casefold, trim, whitespace runs -> one space."""
    return WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
