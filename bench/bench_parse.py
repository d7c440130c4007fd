"""What parsing in a child process costs (kb.max_parse_seconds, kb.max_parse_memory_mb):
the same files (.docx .pptx .xlsx .html, built here) read in-process and through the
parser process of an ingest, in the same run, after both are warm; and the child's
start-up (paid once per ingest that meets such a file). Also the hostile PDF of issue 21
(pages sharing one compressed content stream): how long until it is refused.

Run: ``.venv/bin/python -m bench.bench_parse``. Figures: print a table; compare the
ratio column, not the seconds (the machine is shared)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from agent_search.kb._ingest import (
    Limits,
    ParseSandbox,
    load_file,
)
from bench.documents import make_docx, make_pptx, make_xlsx, shared_stream_pdf

ROUNDS = 10


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-parse-"))
    html = tmp / "d.html"
    html.write_text("<html><head><title>T</title></head><body><article>" + "".join(
        f"<h2>Part {i}</h2><p>Honey bees forage for nectar and pollen, note {i}.</p>"
        for i in range(300)) + "</article></body></html>")
    kinds = [make_docx(tmp / "a.docx"), make_pptx(tmp / "b.pptx"), make_xlsx(tmp / "c.xlsx"),
             html]
    files = kinds * ROUNDS
    for f in kinds:  # imports
        list(load_file(f, f.name))
    t0 = time.perf_counter()
    for f in files:
        list(load_file(f, f.name))
    in_process = time.perf_counter() - t0
    t0 = time.perf_counter()
    with ParseSandbox(Limits(), seconds=60, memory_mb=2048) as sandbox:
        list(sandbox.load(kinds[0], "warm"))
        start = time.perf_counter() - t0
        for f in kinds[1:]:
            list(sandbox.load(f, f.name))
        t0 = time.perf_counter()
        for f in files:
            list(sandbox.load(f, f.name))
        child = time.perf_counter() - t0
    bomb = tmp / "bomb.pdf"
    bomb.write_bytes(shared_stream_pdf(10, b"BT /F1 12 Tf () Tj ET\n" * 45_000))
    t0 = time.perf_counter()
    with ParseSandbox(Limits(max_decompressed=5_000_000), seconds=60,
                      memory_mb=2048) as sandbox:
        (refused,) = list(sandbox.load(bomb, "bomb.pdf"))
    bomb_s = time.perf_counter() - t0
    print("| files | in-process s | parser process s | ratio | process start s |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {len(files)} | {in_process:.2f} | {child:.2f} | {child / in_process:.2f} "
          f"| {start:.2f} |")
    print(f"\nhostile PDF ({bomb.stat().st_size:,} bytes, 10 pages × 1 MB of operators): "
          f"refused in {bomb_s:.2f} s (start included): {getattr(refused, 'reason', refused)}")


if __name__ == "__main__":
    main()
