"""The kb's collection statistics (BM25 document frequencies and average length, the
near-topic rule's score moments) count every tenant's chunks of a shared collection: a
side channel on ranking (a tenant can notice that others hold many chunks with a word).
It is not closed (statistics per visibility would multiply them by the owners), so the
security page must say it, and how to avoid it (one collection per tenant)."""

from __future__ import annotations

from pathlib import Path

SECURITY = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def test_the_security_page_says_the_statistics_are_shared() -> None:
    page = " ".join(SECURITY.read_text(encoding="utf-8").split()).lower()
    assert "collection statistics are shared by the tenants of a collection" in page
    assert "bm25" in page and "near-topic" in page
    assert "its own collection" in page
