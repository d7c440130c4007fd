"""The kb's search: dense, BM25 and hybrid queries fused into calibrated scores
(evidence over a background of unrelated passages), neighbour feedback, the check for a
question's words a passage lacks, and the entity graph.

It builds on :mod:`agent_search.kb._store`; the handler drives it. Names are imported
on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_search._lazy import lazy_exports

if TYPE_CHECKING:
    from agent_search.kb._retrieval._background import (
        dense_background,
        null_of,
    )
    from agent_search.kb._retrieval._foreign import (
        weigh,
    )
    from agent_search.kb._retrieval._graph import (
        associate,
        graph_path,
        update_graph,
    )
    from agent_search.kb._retrieval._hits import (
        Hit,
    )
    from agent_search.kb._retrieval._search import (
        QueryPlan,
        calibrated_fusion,
        search,
    )

_HOME = {
    "Hit": "_hits",
    "QueryPlan": "_search",
    "associate": "_graph",
    "calibrated_fusion": "_search",
    "dense_background": "_background",
    "graph_path": "_graph",
    "null_of": "_background",
    "search": "_search",
    "update_graph": "_graph",
    "weigh": "_foreign",
}
"""Where each name lives: imported on first use."""

__getattr__, __dir__ = lazy_exports(__name__, _HOME)

__all__ = [
    "Hit",
    "QueryPlan",
    "associate",
    "calibrated_fusion",
    "dense_background",
    "graph_path",
    "null_of",
    "search",
    "update_graph",
    "weigh",
]
