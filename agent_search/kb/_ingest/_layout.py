"""Reading order of a page read by OCR, from the geometry of its text boxes alone.

An OCR engine returns boxes in no useful order, and a page may set its text in columns:
sorted by height alone, a line of the left column would be followed by the line beside
it in the right one. So the page is cut, as printed, into *segments* read top to bottom:

1. **Bands.** Boxes are grouped into horizontal bands separated by empty rows (a box
   that overlaps the band by a sliver, as the engine's padded boxes of tight lines do,
   still starts a new band).
2. **Runs of columns.** Consecutive bands that share a vertical gutter — an x-interval
   that none of their boxes crosses, at least :data:`MIN_GUTTER` line heights wide — are
   one run; a band whose boxes cross every gutter (a title, a full-width paragraph) ends
   it. A run is split at its gutter only when each side holds several lines and reads
   as prose (its boxes are many line heights wide): a table's narrow cells, or a line
   the engine cut in two at a wide space, stay rows read left to right.
3. **Columns, then again.** Each side of a split run is cut the same way (a column may
   hold its own columns), left before right; what cannot be cut is a leaf.
4. **Lines, then blocks.** In a leaf, boxes sharing most of their height are one line
   (left to right), and a vertical gap taller than a line starts a new block (paragraph).

This is the recursive X-Y cut of document layout analysis (Nagy and Seth, 1984), with
bands first so that a heading across both columns does not hide the gutter below it.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_search.kb._ingest._loaders import glue

MIN_GUTTER = 0.5
"""A gutter is at least this many line heights wide (the engine pads each box by about a
third of its height on each side, so a printed gutter of one line height shows as ~0.4)."""
MIN_COLUMN_WIDTH = 5.0
"""Each side of a split is prose: its median box is at least this many line heights wide."""
MIN_COLUMN_BANDS = 2
"""A run is split into columns only when it holds at least this many bands, and each side
this many boxes (one line beside a paragraph is not a column)."""
OVERLAP = 0.25
"""A box overlapping the band above by less than this part of its height starts a band."""


@dataclass(frozen=True, slots=True)
class Box:
    """A text box's bounding rectangle, in pixels (y grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    @classmethod
    def of(cls, points: Any) -> Box:
        """The rectangle around an engine's polygon (four ``(x, y)`` points)."""
        xs = [float(p[0]) for p in points]
        ys = [float(p[1]) for p in points]
        return cls(min(xs), min(ys), max(xs), max(ys))

    @property
    def height(self) -> float:
        return max(1.0, self.bottom - self.top)

    @property
    def width(self) -> float:
        return max(1.0, self.right - self.left)


Found = tuple[Box, str]
Gap = tuple[float, float]


def reading_order(found: Sequence[Found]) -> list[str]:
    """Paragraph texts of recognised boxes, in the order a reader reads the page."""
    if not found:
        return []
    height = statistics.median(box.height for box, _ in found)
    return [text for leaf in _segments(list(found), height) for text in _blocks(leaf)]


def _segments(found: list[Found], height: float) -> list[list[Found]]:
    """``found`` cut into leaves in reading order (bands, runs of columns, columns)."""
    runs = _runs(_bands(found, height), height)
    if len(runs) == 1 and runs[0][1] is None:
        return [found]
    out: list[list[Found]] = []
    for items, gap in runs:
        if gap is None:
            out.append(items)
            continue
        left = [f for f in items if f[0].right <= gap[0]]
        right = [f for f in items if f[0].right > gap[0]]
        out += _segments(left, height) + _segments(right, height)
    return out


def _bands(found: list[Found], height: float) -> list[list[Found]]:
    """Boxes grouped into horizontal bands with (next to) no row shared, top to bottom."""
    bands: list[list[Found]] = []
    bottom = 0.0
    for item in sorted(found, key=lambda f: f[0].top):
        box = item[0]
        if bands and bottom - box.top > OVERLAP * min(box.height, height):
            bands[-1].append(item)
            bottom = max(bottom, box.bottom)
        else:
            bands.append([item])
            bottom = box.bottom
    return bands


def _runs(bands: list[list[Found]], height: float) -> list[tuple[list[Found], Gap | None]]:
    """Consecutive bands merged into runs, each with the gutter its boxes leave (or None:
    read as rows)."""
    raw: list[tuple[list[list[Found]], list[Gap]]] = []
    for band in bands:
        if raw and raw[-1][1]:
            kept = _narrow(raw[-1][1], band, height)
            if kept:
                raw[-1] = (raw[-1][0] + [band], kept)
                continue
        raw.append(([band], _gaps(band, height)))
    runs: list[tuple[list[Found], Gap | None]] = []
    for run_bands, gaps in raw:
        items = [f for band in run_bands for f in band]
        gap = _split(items, gaps, len(run_bands), height)
        if gap is None and runs and runs[-1][1] is None:
            runs[-1] = (runs[-1][0] + items, None)  # rows after rows: one leaf
        else:
            runs.append((items, gap))
    return runs


def _gaps(band: list[Found], height: float) -> list[Gap]:
    """The x-intervals inside a band that none of its boxes covers, wide enough."""
    boxes = sorted((box for box, _ in band), key=lambda b: b.left)
    gaps: list[Gap] = []
    reach = boxes[0].right
    for box in boxes[1:]:
        if box.left - reach >= MIN_GUTTER * height:
            gaps.append((reach, box.left))
        reach = max(reach, box.right)
    return gaps


def _narrow(gaps: list[Gap], band: list[Found], height: float) -> list[Gap]:
    """The parts of ``gaps`` that no box of ``band`` covers, those still wide enough."""
    for box, _ in band:
        cut: list[Gap] = []
        for start, end in gaps:
            cut += [g for g in ((start, min(end, box.left)), (max(start, box.right), end))
                    if g[1] - g[0] >= MIN_GUTTER * height]
        gaps = cut
    return gaps


def _split(items: list[Found], gaps: list[Gap], bands: int, height: float) -> Gap | None:
    """The widest gutter that cuts ``items`` into two sides of prose, or None."""
    if bands < MIN_COLUMN_BANDS:
        return None
    for gap in sorted(gaps, key=lambda g: g[0] - g[1]):
        sides = ([b.width for b, _ in items if b.right <= gap[0]],
                 [b.width for b, _ in items if b.left >= gap[1]])
        if all(len(side) >= MIN_COLUMN_BANDS
               and statistics.median(side) >= MIN_COLUMN_WIDTH * height for side in sides):
            return gap
    return None


def _blocks(found: Sequence[Found]) -> list[str]:
    """Paragraph texts of one leaf: lines (boxes sharing most of their height, left to
    right), then blocks (a gap over a line's height between two lines)."""
    lines = _lines(sorted(found, key=lambda f: (f[0].top + f[0].bottom) / 2))
    if not lines:
        return []
    heights = statistics.median(box.height for box, _ in lines)
    blocks: list[list[str]] = [[lines[0][1]]]
    for (above, _), (box, text) in itertools.pairwise(lines):
        if box.top - above.bottom > heights:
            blocks.append([])
        blocks[-1].append(text)
    return [_join_lines(block) for block in blocks]


def _lines(found: Sequence[Found]) -> list[Found]:
    """Boxes (sorted by their middle) grouped into lines: a box joins the line when it
    overlaps it by over half its height."""
    rows: list[list[Found]] = []
    for box, text in found:
        if rows:
            last = rows[-1]
            top = min(b.top for b, _ in last)
            bottom = max(b.bottom for b, _ in last)
            if min(bottom, box.bottom) - max(top, box.top) > box.height / 2:
                last.append((box, text))
                continue
        rows.append([(box, text)])
    out: list[Found] = []
    for row in rows:
        row.sort(key=lambda f: f[0].left)
        merged = Box(min(b.left for b, _ in row), min(b.top for b, _ in row),
                     max(b.right for b, _ in row), max(b.bottom for b, _ in row))
        out.append((merged, glue(t.strip() for _, t in row)))
    return out


def _join_lines(lines: list[str]) -> str:
    """A block's lines as one paragraph: a word hyphenated at a line's end is joined."""
    parts: list[str] = []
    for line in lines:
        if parts and parts[-1].endswith("-") and line[:1].islower() \
                and parts[-1][-2:-1].isalpha():
            parts[-1] = parts[-1][:-1] + line
        else:
            parts.append(line)
    return glue(parts)
