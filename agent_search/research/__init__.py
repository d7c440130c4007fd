"""Research mode: search until every part of a question is covered, within a budget.

>>> report = await searcher.research("Do Qdrant and Milvus support sparse vectors?")
>>> report.stopped, [(p.text, p.covered, p.citations) for p in report.parts]

The question is read into parts (:func:`plan_question`: several sentences, clauses
joined by "and"/"or", one frame around several names), every part is searched on the
run's search types at once, and what no reference covers yet (the grounding's check,
per part) is searched again in the next round, until every part is covered, a round
brings nothing new, or a budget (``research.max_rounds``, ``max_searches``,
``max_llm_calls``, ``deadline``) is spent. With ``research.planner: llm`` an
OpenAI-compatible model plans and words the gap queries (the builtin planner answers
whenever it does not). Events ``research_plan``, ``research_round``, ``research_gap``
and ``research_done`` go to the run's event sink beside the searches' own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_search.config import ResearchConfig
from agent_search.research._events import ResearchDone, ResearchGap, ResearchPlan, ResearchRound
from agent_search.research._plan import Part, plan_question
from agent_search.research._planner import BuiltinPlanner, LLMPlanner, Planner
from agent_search.research._run import (
    PartReport,
    ResearchResult,
    RoundReport,
    SearchReport,
    run_research,
)

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.searcher import Searcher

__all__ = ["BuiltinPlanner", "LLMPlanner", "Part", "PartReport", "Planner", "ResearchConfig",
           "ResearchDone", "ResearchGap", "ResearchPlan", "ResearchResult", "ResearchRound",
           "RoundReport", "SearchReport", "plan_question", "research"]


async def research(searcher: Searcher, question: str, *, ctx: Context,
                   settings: ResearchConfig | None = None, types: Sequence[str] = (),
                   planner: Planner | None = None, limit: int | None = None
                   ) -> ResearchResult:
    """Research ``question`` with ``searcher`` (see the module); what
    :meth:`Searcher.research` calls."""
    settings = settings or ctx.config.research
    chosen = list(types or settings.types or ctx.config.enabled_types()
                  or searcher.registry.types)
    if planner is None:
        planner = LLMPlanner(settings) if settings.planner == "llm" \
            else BuiltinPlanner(settings.max_parts)
    return await run_research(searcher, question, ctx=ctx, settings=settings, types=chosen,
                              planner=planner, limit=limit)
