"""The research loop: plan, search the parts in parallel, find the gaps, search again.

Each round runs its searches concurrently (:meth:`Searcher.search_many`, on the run's
context, so citation ids are unique across rounds); the first also searches the whole
question, after its parts. After the round, each part not yet covered is checked against
every reference found so far with the grounding's check
(:func:`agent_search.grounding.ground`, the part read as a sentence: a name or number
of the part that no reference states, or too few of its words in any reference, leaves
it uncovered). The next round searches the gaps: the planner's gap queries (the builtin
one follows names the last round's references brought up next to the part's words, then
the part's content words alone, then its phrases one at a time). The run stops when
every part is covered, when a round brings nothing new, or when a budget is spent
(rounds, searches, LLM calls, the deadline), and says which.

A failing search is a warning of its round (its source's error), never the end of the
run: the other searches of the round count.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, Field

from agent_search.config import ResearchConfig
from agent_search.grounding import Thresholds
from agent_search.research._events import ResearchDone, ResearchGap, ResearchPlan, ResearchRound
from agent_search.types import Request, Result, ResultItem

if TYPE_CHECKING:
    from agent_search.context import Context
    from agent_search.research._planner import Planner
    from agent_search.searcher import Searcher


class PartReport(BaseModel):
    """One part of the question: covered or not, by which references, searched how."""

    text: str
    covered: bool = False
    citations: list[str] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)


class SearchReport(BaseModel):
    type: str
    query: str
    part: str
    count: int = 0
    error: str | None = None


class RoundReport(BaseModel):
    round: int
    searches: list[SearchReport] = Field(default_factory=list)
    new_references: int = 0
    gaps: list[str] = Field(default_factory=list)


class ResearchResult(BaseModel):
    """What a research run found, and why it stopped.

    ``items`` are the unique references of every round (first citation id kept);
    ``stopped`` is ``covered``, ``nothing_new``, ``max_rounds``, ``max_searches``,
    ``deadline`` or ``nothing_understood``; ``budget`` gives, per budget (rounds,
    searches, llm_calls, seconds), what was used and the limit. A spent LLM-call budget
    does not stop the run: the builtin planner goes on."""

    question: str
    planner: str = "builtin"
    parts: list[PartReport] = Field(default_factory=list)
    rounds: list[RoundReport] = Field(default_factory=list)
    items: list[ResultItem] = Field(default_factory=list)
    stopped: str = ""
    budget: dict[str, dict[str, float]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def covered(self) -> bool:
        """Every part has a reference."""
        return bool(self.parts) and all(p.covered for p in self.parts)

    def to_result(self) -> Result:
        """The references as one :class:`Result` (type ``research``), for callers that
        take search results."""
        return Result(type="research", query=self.question, items=list(self.items),
                      total=len(self.items), warnings=list(self.warnings))


@dataclass
class _State:
    """A run's bookkeeping: budgets spent, references found, parts and their queries."""

    settings: ResearchConfig
    started: float
    parts: list[PartReport]
    searches: int = 0
    llm_calls: int = 0
    seen_queries: set[tuple[str, str]] = field(default_factory=set)
    seen_items: dict[str, ResultItem] = field(default_factory=dict)
    part_items: dict[int, list[ResultItem]] = field(default_factory=dict)

    def left(self) -> float:
        return self.settings.deadline - (time.perf_counter() - self.started)

    def budget(self, rounds: int) -> dict[str, dict[str, float]]:
        s = self.settings
        return {"rounds": {"used": rounds, "limit": s.max_rounds},
                "searches": {"used": self.searches, "limit": s.max_searches},
                "llm_calls": {"used": self.llm_calls, "limit": s.max_llm_calls},
                "seconds": {"used": round(time.perf_counter() - self.started, 3),
                            "limit": float(s.deadline)}}


async def run_research(searcher: Searcher, question: str, *, ctx: Context,
                       settings: ResearchConfig, types: Sequence[str],
                       planner: Planner, limit: int | None = None) -> ResearchResult:
    """The loop (see the module). ``types``: what every part is searched on."""
    state = _State(settings, time.perf_counter(), [])
    plan, planner_name = await planner.plan(question, state_calls(state))
    state.parts = [PartReport(text=p.text) for p in plan[:settings.max_parts]]
    out = ResearchResult(question=question, planner=planner_name, parts=state.parts)
    emit = ctx.events.emit
    rid = ctx.request_id
    emit(ResearchPlan(rid, [p.text for p in state.parts], planner_name,
                      {k: v["limit"] for k, v in state.budget(0).items()}))
    if problem := _nothing_to_search(state, types):
        out.stopped = "nothing_understood"
        out.warnings.append(problem)
        return _done(out, state, 0, emit, rid)
    queries = _first_queries(state, question)
    rounds = 0
    while not (stop := _budget_stop(state, rounds)):
        rounds += 1
        report = await _round(searcher, ctx, state, queries, types, limit, rounds, out)
        out.rounds.append(report)
        await _check_coverage(state)
        _report_coverage(ctx, state, report, rounds)
        if stop := _round_stop(report, rounds):
            break
        queries = await _gap_queries(state, planner, question, rounds, emit, rid)
        if not any(queries.values()):
            stop = "nothing_new"
            break
    out.stopped = stop
    return _done(out, state, rounds, emit, rid)


def _report_coverage(ctx: Context, state: _State, report: RoundReport, rounds: int) -> None:
    """The round's gaps (the parts still uncovered) into its report and its event."""
    report.gaps = [p.text for p in state.parts if not p.covered]
    ctx.events.emit(ResearchRound(ctx.request_id, rounds,
                                  [s.model_dump() for s in report.searches],
                                  report.new_references,
                                  [p.text for p in state.parts if p.covered], report.gaps))


def _nothing_to_search(state: _State, types: Sequence[str]) -> str | None:
    """Why research cannot start: no part understood, or no type to search on."""
    if not types:
        return "no search type to research on"
    return None if state.parts else "no part of the question to search"


def _first_queries(state: _State, question: str) -> dict[int, list[str]]:
    """The first round's queries: each part's text, and the whole question when there
    are several parts (what a single search finds, research finds too)."""
    queries = {i: [p.text] for i, p in enumerate(state.parts)}
    if len(state.parts) > 1:
        queries[WHOLE] = [question]
    return queries


def _round_stop(report: RoundReport, rounds: int) -> str | None:
    """Why research stops after this round: every part covered, or a round after the
    first that found no reference not seen before; None to go on."""
    if not report.gaps:
        return "covered"
    if report.new_references == 0 and rounds > 1:
        return "nothing_new"
    return None


def state_calls(state: _State) -> _LLMBudget:
    return _LLMBudget(state)


class _LLMBudget:
    """What a planner may spend of the LLM-call budget and the time left."""

    def __init__(self, state: _State) -> None:
        self._state = state

    def take(self) -> bool:
        """Count one LLM call; False (and nothing counted) when the budget is spent."""
        s = self._state
        if s.llm_calls >= s.settings.max_llm_calls or s.left() <= 0:
            return False
        s.llm_calls += 1
        return True

    @property
    def seconds_left(self) -> float:
        return self._state.left()


def _budget_stop(state: _State, rounds: int) -> str | None:
    s = state.settings
    if rounds >= s.max_rounds:
        return "max_rounds"
    if state.searches >= s.max_searches:
        return "max_searches"
    if state.left() <= 0:
        return "deadline"
    return None


WHOLE = -1
"""The key of the whole question's own query in a round's queries (the first round
searches it after the parts: a reference that answers the question as a whole, which no
part's words alone reach, is not lost). Its references count for the coverage check of
every part, not as any one part's finds."""


async def _round(searcher: Searcher, ctx: Context, state: _State,
                 queries: dict[int, list[str]], types: Sequence[str], limit: int | None,
                 number: int, out: ResearchResult) -> RoundReport:
    """One round: every query of every part on every type, at once, within budget."""
    planned = _plan_round(state, queries, types, limit)
    state.searches += len(planned)
    report = RoundReport(round=number)
    if not planned:
        return report
    results = await searcher.search_many([r for _, r in planned], ctx=ctx,
                                         deadline=max(0.001, state.left()))
    for (index, request), result in zip(planned, results, strict=True):
        part = out.question if index == WHOLE else state.parts[index].text
        report.searches.append(SearchReport(type=request.type, query=request.query,
                                            part=part, count=len(result.items),
                                            error=result.error))
        if result.error:
            out.warnings.append(f"round {number}: {result.error}")
        report.new_references += _keep_found(state, index, result.items)
    return report


def _plan_round(state: _State, queries: dict[int, list[str]], types: Sequence[str],
                limit: int | None) -> list[tuple[int, Request]]:
    """The searches of a round, each with the key of its part: every query on every type
    but the ones already searched, while the search budget lasts. A part's new queries
    are added to its report."""
    planned: list[tuple[int, Request]] = []
    for index, texts in queries.items():
        for text, search_type in ((t, st) for t in texts for st in types):
            key = (search_type, " ".join(text.casefold().split()))
            if key in state.seen_queries or \
                    state.searches + len(planned) >= state.settings.max_searches:
                continue
            state.seen_queries.add(key)
            planned.append((index, Request(type=search_type, query=text, limit=limit,
                                           source="auto")))
            if index != WHOLE and text not in state.parts[index].queries:
                state.parts[index].queries.append(text)
    return planned


def _keep_found(state: _State, index: int, items: Sequence[ResultItem]) -> int:
    """The references of one search kept for part ``index`` (a reference seen before as
    its first copy); how many were new."""
    new = 0
    for item in items:
        ident = _identity(item)
        if ident not in state.seen_items:
            state.seen_items[ident] = item
            new += 1
        state.part_items.setdefault(index, []).append(state.seen_items[ident])
    return new


def _identity(item: ResultItem) -> str:
    """Which references are the same one, across rounds and sources."""
    if item.url:
        return f"url:{item.url}"
    if item.document_id or item.record_id is not None:
        return f"{item.type}:{item.collection}:{item.document_id}:{item.model}:{item.record_id}"
    return f"text:{item.type}:{item.content[:500]}"


def _reference(item: ResultItem) -> dict[str, Any]:
    """What the coverage check reads of a reference: its text, or its record's values."""
    content = item.content
    if item.data:
        content = f"{content} {json.dumps(item.data, ensure_ascii=False, default=str)}"
    return {"citation_id": item.citation_id, "title": item.title or "", "content": content}


async def _check_coverage(state: _State) -> None:
    refs = [_reference(i) for i in state.seen_items.values()]
    pending = [(i, p) for i, p in enumerate(state.parts) if not p.covered]
    if not pending or not refs:
        return
    verdicts = await anyio.to_thread.run_sync(
        _coverage, [p.text for _, p in pending], refs,
        [bool(state.part_items.get(i)) for i, _ in pending])
    for (_, part), (covered, citations) in zip(pending, verdicts, strict=True):
        part.covered, part.citations = covered, citations


PART_THRESHOLDS = Thresholds(coverage=0.5)
"""A part is a question, not a claim: its words are the topic and the relation asked
about, which the answer words its own way ("open" / "opens"); half of them in one window
of a reference (every name and number of the part still required) covers it."""


def _coverage(parts: list[str], refs: list[dict[str, Any]], found: list[bool]
              ) -> list[tuple[bool, list[str]]]:
    """Per part: whether a reference says what it asks about (the grounding's check on
    the part as a sentence), and which. A part with no claim to check (too few words)
    is covered when its own searches found something."""
    return [_part_verdict(text, refs, any_found)
            for text, any_found in zip(parts, found, strict=True)]


def _part_verdict(text: str, refs: list[dict[str, Any]], any_found: bool
                  ) -> tuple[bool, list[str]]:
    """Whether the references cover one part, and the citations that do."""
    from agent_search.grounding import ground

    sentences = ground(text.rstrip("?？") + ".", refs, thresholds=PART_THRESHOLDS)
    claims = [s for s in sentences if s.status != "no_claim"]
    if not claims:
        return any_found, []
    covered = all(s.status == "supported" for s in claims)
    cites = list(dict.fromkeys(c for s in claims for c in s.support + s.cited))
    return covered, cites if covered else []


async def _gap_queries(state: _State, planner: Planner, question: str, rounds: int,
                       emit: Any, rid: str) -> dict[int, list[str]]:
    queries: dict[int, list[str]] = {}
    budget = state_calls(state)
    for index, part in enumerate(state.parts):
        if part.covered:
            continue
        found = state.part_items.get(index, [])
        wanted = await planner.gaps(question, part.text, found, part.queries, budget)
        fresh = [q for q in wanted if q not in part.queries]
        queries[index] = fresh
        emit(ResearchGap(rid, rounds, part.text, fresh))
    return queries


def _done(out: ResearchResult, state: _State, rounds: int, emit: Any, rid: str
          ) -> ResearchResult:
    out.items = sorted(state.seen_items.values(), key=_citation_order)
    out.budget = state.budget(rounds)
    emit(ResearchDone(rid, out.stopped, sum(p.covered for p in out.parts), len(out.parts),
                      out.budget))
    return out


def _citation_order(item: ResultItem) -> tuple[int, str]:
    cid = item.citation_id or ""
    return (int(cid), "") if cid.isdigit() else (1 << 30, cid)
