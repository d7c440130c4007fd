"""Knowledge-base ingest under hostile input (issue 11 item 5, item 12's pypdf part).

Regressions: size caps per file and per run, text streamed in bounded memory, chunking
linear in the input with chunks capped in characters, progress on stderr when not on a
terminal (also with ``--json``), pypdf warnings kept off stderr. Property: arbitrary file
content through the loaders and the chunker raises nothing and gives bounded output.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import agent_search.cli  # noqa: F401  (registers the sub-commands)
from agent_search import SearchConfig
from agent_search.cli.app import app
from agent_search.kb import Skipped, ingest_paths
from agent_search.kb._ingest import Document, approx_tokens, load_file
from agent_search.kb._ingest._chunking import chunk_document

from ..support.kb import linked_home, prepared_model_home

CHARS_PER_TOKEN = 12  # the chunk cap: 12 characters per token of max_tokens

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared_model_home(tmp_path_factory, "kb-sec-model")


@pytest.fixture
def home(tmp_path: Path, model_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from linked_home(tmp_path, model_home, monkeypatch)


def _text(words: int) -> str:
    return " ".join(f"word{i % 997}" for i in range(words)) + ".\n"


# --- size caps ---------------------------------------------------------------------------

@pytest.mark.anyio
async def test_a_file_over_the_per_file_cap_is_skipped_and_the_rest_goes_on(
        home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "big.txt").write_text(_text(2000))  # ~20 kB
    (folder / "small.md").write_text("# Small\n\nA short note about bees.\n")
    config = SearchConfig(home=home).merged({"kb": {"max_file_mb": 0.005}})  # 5 kB
    report = await ingest_paths(config, [folder], "caps")
    assert report.documents == 1 and report.files == 1
    (skipped,) = report.skipped
    assert skipped.source.endswith("big.txt")
    assert "over the per-file cap of 0.005 MB (kb.max_file_mb)" in skipped.reason


@pytest.mark.anyio
async def test_files_beyond_the_per_run_cap_are_skipped(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (folder / name).write_text(_text(300))  # 2.3 kB each
    config = SearchConfig(home=home).merged({"kb": {"max_run_mb": 0.005}})
    report = await ingest_paths(config, [folder], "caps")
    assert report.files == 2
    assert [Path(s.source).name for s in report.skipped] == ["c.txt"]
    assert "per-run cap of 0.005 MB (kb.max_run_mb)" in report.skipped[0].reason


def test_caps_are_validated_settings() -> None:
    from agent_search.errors import ConfigError
    from agent_search.kb.settings import KBSettings

    assert KBSettings().max_file_mb == 20 and KBSettings().max_run_mb == 1000
    with pytest.raises(ConfigError, match="max_file_mb"):
        KBSettings.from_config(SearchConfig().merged({"kb": {"max_file_mb": 0}}))


# --- bounded memory, linear work -----------------------------------------------------------

def _counting(calls: list[int]) -> object:
    def count(texts: Sequence[str]) -> list[int]:
        calls.append(sum(len(t) for t in texts))
        return approx_tokens(texts)
    return count


SHAPES = {
    "one paragraph of lines": lambda n: "\n".join(_text(12).strip() for _ in range(n // 100)),
    "one line, no newline": lambda n: _text(n // 8).replace("\n", " ") * 1,
    "no whitespace at all": lambda n: "x" * n,
    "sentences": lambda n: "Short one. " * (n // 11),
    "cjk without spaces": lambda n: "中文检索测试。" * (n // 7),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_chunking_is_linear_and_chunks_are_capped(shape: str, tmp_path: Path) -> None:
    """Every character is counted at most three times, and no chunk is over the character
    cap (a 400 kB run without spaces used to be one 400 kB chunk: one unknown token)."""
    size = 400_000
    path = tmp_path / "doc.txt"
    path.write_text(SHAPES[shape](size), encoding="utf-8")
    (doc,) = list(load_file(path))
    assert isinstance(doc, Document)
    calls: list[int] = []
    chunks = chunk_document(doc, _counting(calls), max_tokens=64, overlap=8)  # type: ignore[arg-type]
    chars = path.stat().st_size
    assert sum(calls) <= 3 * chars + 1000
    assert chunks and max(len(c.text) for c in chunks) <= CHARS_PER_TOKEN * 64
    assert sum(len(c.text) for c in chunks) <= 3 * chars


def test_a_large_text_file_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """1.6 MB without a blank line (one paragraph) or without any newline: Python memory
    stays under 1.5 MB while the chunks stream out (it held the whole file, one block of
    it and every chunk before: over twice the file). Most of what remains is one
    counting batch's words (bounded by COUNT_BATCH_CHARS), not the file."""
    from agent_search.kb._ingest import iter_chunks  # the lazy form of chunk_document

    for name, text in (("lines.txt", "\n".join(_text(10).strip() for _ in range(27_000))),
                       ("flat.md", _text(230_000).replace("\n", " "))):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert path.stat().st_size > 1_600_000
        del text
        tracemalloc.start()
        try:
            n = 0
            for doc in load_file(path):
                assert isinstance(doc, Document)
                for _ in iter_chunks(doc, approx_tokens, max_tokens=256, overlap=32):
                    n += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert n > 300
        assert peak < 1_500_000, f"{name}: peak {peak / 1e6:.2f} MB"


@pytest.mark.anyio
async def test_ingest_of_a_file_without_whitespace_completes_in_bounded_chunks(
        home: Path, tmp_path: Path) -> None:
    """A regression check that a 300 kB file without whitespace goes through the whole
    ingest (counted, embedded, written) as ~100 bounded chunks, not one 300 kB chunk, and
    is idempotent."""
    path = tmp_path / "one.txt"
    path.write_text("x" * 300_000, encoding="utf-8")  # one unknown token per 128 chars
    config = SearchConfig(home=home)
    report = await ingest_paths(config, [path], "big")
    assert report.documents == 1 and report.chunks >= 90 and report.added == report.chunks
    again = await ingest_paths(config, [path], "big")
    assert again.unchanged == report.chunks and again.added == again.removed == 0


# --- progress and stderr ------------------------------------------------------------------

def test_progress_lines_on_stderr_when_not_a_terminal_also_with_json(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_search.cli.kb as kb_cli

    monkeypatch.setattr(kb_cli, "PROGRESS_INTERVAL", 0.05)
    path = tmp_path / "notes.txt"
    path.write_text("\n\n".join(_text(40) for _ in range(40)))
    out = runner.invoke(app, ["kb", "ingest", str(path), "-c", "prog", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)  # stdout: exactly one JSON document
    assert report["added"] == report["chunks"] > 0
    lines = [line for line in out.stderr.splitlines() if line.startswith("agent-search: ")]
    assert len(lines) >= 2
    assert re.search(r"ingesting: [\d.]+ kB of [\d.]+ kB \(100%\)", lines[-1])


def _pdf_with_warnings(path: Path) -> None:
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
    buf = io.BytesIO()
    writer.write(buf)
    # a wrong startxref offset: pypdf recovers and logs "incorrect startxref pointer"
    path.write_bytes(re.sub(rb"startxref\s+(\d+)",
                            lambda m: b"startxref\n" + str(int(m.group(1)) + 7).encode(),
                            buf.getvalue()))


def test_parser_warnings_go_to_the_report_not_stderr(home: Path, tmp_path: Path) -> None:
    """A real process (pytest's log capture would hide logging's last-resort output):
    with ``--json``, stderr has progress lines only, and pypdf's warning is in the
    report."""
    folder = tmp_path / "in"
    folder.mkdir()
    _pdf_with_warnings(folder / "leaf.pdf")
    (folder / "blank.html").write_text("<html> </html>")  # trafilatura logs errors on it
    env = {**os.environ, "AGENT_SEARCH_HOME": str(home),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "agent_search", "kb", "ingest", str(folder),
                           "-c", "pdf", "--json"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["documents"] == 1
    assert any("startxref" in w["message"] for w in report["warnings"])
    assert [s["reason"] for s in report["skipped"]] == ["no text"]
    noise = [line for line in proc.stderr.splitlines()
             if not line.startswith("agent-search: ingesting")]
    assert noise == []


# --- property: arbitrary content into the loaders and the chunker --------------------------

_SUFFIXES = (".txt", ".md", ".html", ".jsonl", ".pdf")

_content = st.one_of(
    st.binary(max_size=4000),
    st.text(max_size=4000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.builds(lambda c, n: (c * n).encode("utf-8", "surrogatepass"),
              st.text(min_size=1, max_size=3), st.integers(1, 60_000)),   # huge lines
    st.builds(lambda n: b"<div>" * n + b"deep" + b"</div>" * n,
              st.integers(1, 5000)),                                      # deep HTML
    st.builds(lambda n: b"[" * n + b"]" * n, st.integers(1, 5000)),       # deep JSON
    st.builds(lambda a, b: a + b"\x00\xff\xfe" + b, st.binary(max_size=200),
              st.binary(max_size=200)),                                   # NULs, bad UTF-8
    st.builds(lambda n: ("#" * 6 + " " + "# " * n + "x\n").encode(), st.integers(1, 3000)),
)


@given(content=_content, suffix=st.sampled_from(_SUFFIXES))
def test_any_file_content_gives_documents_or_skips_with_bounded_chunks(
        tmp_path_factory: pytest.TempPathFactory, content: bytes, suffix: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / f"f{suffix}"
    path.write_bytes(content)
    total = 0
    for item in load_file(path):
        assert isinstance(item, Document | Skipped)
        if isinstance(item, Skipped):
            assert item.reason and "\n" not in item.reason
            continue
        for chunk in chunk_document(item, approx_tokens, max_tokens=64, overlap=8):
            assert len(chunk.text) <= CHARS_PER_TOKEN * 64
            total += len(chunk.text)
    assert total <= 3 * len(content) + 100
