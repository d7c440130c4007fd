"""Ingestion: idempotency, bad files, formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_search import SearchConfig
from agent_search.kb import ingest_paths, list_collections
from agent_search.kb._store import get_store
from agent_search.kb.ingest import source_hashes

from ..support.data import KB_SAMPLE

pytestmark = pytest.mark.anyio


async def _points(config: SearchConfig, name: str) -> int:
    rows = {r["name"]: r["points"] for r in await list_collections(config)}
    return int(rows[name])


async def test_reingest_replaces_never_duplicates(config: SearchConfig, docs: Path) -> None:
    first = await ingest_paths(config, [docs], "docs")
    again = await ingest_paths(config, [docs], "docs")
    assert again.chunks == first.chunks
    assert again.embedded == 0 and again.unchanged == first.chunks and again.deleted == 0
    assert await _points(config, "docs") == first.chunks

    md = docs / "qdrant.md"
    md.write_text(md.read_text().split("## Hybrid queries")[0]
                  + "## Snapshots\n\nCollections can be saved as snapshots.\n")
    changed = await ingest_paths(config, [docs], "docs")
    assert changed.embedded == 1  # only the changed section is embedded again
    assert await _points(config, "docs") == first.chunks

    md.write_text("# Qdrant\n\nA vector database.\n")
    shrunk = await ingest_paths(config, [md], "docs")
    assert shrunk.deleted >= 2
    store = get_store(__import__("agent_search.kb.settings", fromlist=["KBSettings"])
                      .KBSettings(), config.home)
    # sources are named by their resolved path relative to the data home's parent
    hashes = source_hashes(store, "docs", md.resolve().relative_to(
        config.home.resolve().parent).as_posix())
    assert len(hashes) == 1


async def test_bad_files_are_reported_and_skipped(config: SearchConfig, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nThis file is fine and has some text.\n")
    (folder / "empty.txt").write_text("   \n\n")
    (folder / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (folder / "bad.jsonl").write_text('{"_id": "1", "text": "a fine record"}\nnot json\n{"x": 1}\n')
    (folder / "image.png").write_bytes(b"\x89PNG")  # truncated: read by OCR, cannot parse
    (folder / "sound.mp3").write_bytes(b"ID3")
    report = await ingest_paths(config, [folder, tmp_path / "nowhere.txt"], "mixed")
    reasons = {Path(s.source.split(":")[0]).name: s.reason for s in report.skipped}
    assert reasons["empty.txt"] == "no text"
    assert reasons["latin1.txt"] == "not UTF-8 text"
    assert "cannot parse" in reasons["broken.pdf"]
    assert reasons["nowhere.txt"] == "no such file or folder"
    assert sum(1 for s in report.skipped if s.source.startswith(str(folder / "bad.jsonl"))) == 2
    assert "sound.mp3" not in reasons  # folders are walked for supported types only
    assert "cannot" in reasons["image.png"]
    assert report.documents == 2  # good.md and the one good jsonl record
    assert await _points(config, "mixed") == report.chunks


async def test_unsupported_file_given_explicitly(config: SearchConfig, tmp_path: Path) -> None:
    sound = tmp_path / "a.mp3"
    sound.write_bytes(b"ID3")
    report = await ingest_paths(config, [sound], "x")
    assert report.documents == 0 and "unsupported" in report.skipped[0].reason
    assert await list_collections(config) == []  # nothing to store: no empty collection


async def test_pdf_text_layer(config: SearchConfig, tmp_path: Path) -> None:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                             NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
        {NameObject("/F1"): writer._add_object(font)})})
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf 72 720 Td (Photosynthesis turns light into sugar.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(stream)
    pdf = tmp_path / "leaf.pdf"
    with pdf.open("wb") as fh:
        writer.write(fh)
    report = await ingest_paths(config, [pdf], "pdf")
    assert report.documents == 1 and report.skipped == []
    from agent_search import Context, Request
    from agent_search.kb import create_handler

    result = await create_handler(config).search(
        Context(config=config), Request(type="kb", query="photosynthesis sugar", limit=1))
    assert "Photosynthesis" in result.items[0].content
    assert result.items[0].metadata["page"] == 1


async def test_beir_corpus_records_keep_their_ids(config: SearchConfig, tmp_path: Path) -> None:
    lines = (KB_SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = await ingest_paths(config, [corpus], "sci")
    assert report.documents == 20 and report.skipped == []
    from agent_search import Context, Request
    from agent_search.kb import create_handler

    result = await create_handler(config).search(Context(config=config), Request(
        type="kb", query="does jogging help people who are depressed?", limit=1))
    assert result.items[0].document_id == "kb016"


async def test_bad_collection_name(config: SearchConfig, docs: Path) -> None:
    with pytest.raises(ValueError, match="invalid collection name"):
        await ingest_paths(config, [docs], "../evil")
