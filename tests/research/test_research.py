"""Research mode over handlers of the tests' own (word-overlap search over a few notes)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from agent_search import ListSink, Request, Result, ResultItem, SearchConfig, Searcher
from agent_search.research import plan_question

from ..support.llm_server import ThreadedChatServer

pytestmark = pytest.mark.anyio

NOTES = {
    "ferry": "The harbour ferry leaves the north pier at seven every morning.",
    "museum": "The maritime museum opens at ten and closes at five on weekdays.",
    "bakery": "Lindqvist Bakery sells cardamom buns; it was founded by Greta Lindqvist.",
    "greta": "Greta Lindqvist was born in Visby in 1931.",
    "noise": "Parking near the harbour is free after six in the evening.",
}
_WORD = re.compile(r"\w+")
_STOP = {"the", "a", "at", "in", "on", "and", "what", "when", "does", "do", "is", "was",
         "who", "it", "of", "time", "where"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


class Notes:
    """Scores a note by the share of the query's words it holds; counts its calls."""

    type = "notes"

    def __init__(self, delay: float = 0.0) -> None:
        self.queries: list[str] = []
        self.delay = delay

    def can_handle(self, ctx: Any, request: Request) -> bool:
        return True

    async def search(self, ctx: Any, request: Request) -> Result:
        self.queries.append(request.query)
        if self.delay:
            await anyio.sleep(self.delay)
        words = _words(request.query)
        scored = sorted(((len(words & _words(text)) / max(1, len(words)), name, text)
                         for name, text in NOTES.items()), reverse=True)
        items = [ResultItem(title=name, content=text, score=score, document_id=name,
                            collection="notes")
                 for score, name, text in scored if score > 0][: request.limit or 1]
        return Result(type="notes", query=request.query, items=items, total=len(items))


class Broken:
    type = "broken"

    def can_handle(self, ctx: Any, request: Request) -> bool:
        return True

    async def search(self, ctx: Any, request: Request) -> Result:
        raise RuntimeError("the source is down")


def searcher(*handlers: Any, **research: Any) -> Searcher:
    config = SearchConfig().merged({"research": research} if research else {})
    return Searcher(config, handlers=list(handlers) or [Notes()])


QUESTION = "When does the ferry leave and when does the museum open?"
UNCOVERED = "When does the ferry leave and what does the glacier tour cost?"


async def test_each_part_is_searched_and_covered() -> None:
    notes = Notes()
    s = searcher(notes)
    sink = ListSink()
    ctx = s.context(events=sink)
    report = await s.research(QUESTION, ctx=ctx, limit=1)
    assert [p.text for p in report.parts] == ["When does the ferry leave",
                                             "when does the museum open?"]
    assert report.covered and report.stopped == "covered"
    assert {i.title for i in report.items} == {"ferry", "museum"}
    assert all(p.citations for p in report.parts)
    kinds = sink.kinds()
    assert kinds[0] == "research_plan" and kinds[-1] == "research_done"
    assert "research_round" in kinds
    assert report.budget["rounds"]["used"] == 1
    # each part, then the whole question (what a single search would find is not lost)
    assert report.budget["searches"]["used"] == 3
    assert [(s.query, s.part) for s in report.rounds[0].searches][-1] == (QUESTION, QUESTION)
    assert notes.queries[-1] == QUESTION


async def test_single_shot_misses_a_part_that_research_finds() -> None:
    s = searcher()
    single = await s.search({"type": "notes", "query": QUESTION, "limit": 1})
    assert len(single.items) == 1  # one part only, whichever ranks first


async def test_a_gap_is_searched_again_and_reported() -> None:
    notes = Notes()
    s = searcher(notes)
    sink = ListSink()
    report = await s.research(UNCOVERED, ctx=s.context(events=sink), limit=1)
    gaps = [e.to_dict() for e in sink.events if e.event == "research_gap"]
    assert gaps and gaps[0]["part"] == "what does the glacier tour cost?"
    assert gaps[0]["queries"] == ["glacier tour cost"]
    assert "glacier tour cost" in notes.queries  # the next round searched it
    assert [p.covered for p in report.parts] == [True, False]
    assert report.stopped == "nothing_new"


async def test_a_gap_query_follows_a_name_the_references_bring_up() -> None:
    from agent_search.research import BuiltinPlanner

    found = [ResultItem(title="bakery", content=NOTES["bakery"])]
    queries = await BuiltinPlanner().gaps(
        "Who runs the bakery that sells cardamom buns, and where was its founder born?",
        "where was the bakery founder born", found, ["where was the bakery founder born"],
        budget=None)  # type: ignore[arg-type]
    # the name first, then the part's words alone (two queries a gap per round)
    assert queries == ["bakery founder born Greta Lindqvist", "bakery founder born"]


async def test_a_word_that_only_begins_a_sentence_is_no_name_to_follow() -> None:
    from agent_search.research import BuiltinPlanner

    found = [ResultItem(title="ferry", content="The Timetable: the ferry leaves at seven; "
                        "the timetable changes in winter. Olsen runs the ferry.")]
    queries = await BuiltinPlanner().gaps("When does the ferry leave?", "ferry leave",
                                          found, ["ferry leave"], budget=None)  # type: ignore[arg-type]
    # "The Timetable" → "Timetable", which the reference also writes in lower case: a
    # word that began a sentence (it used to rank first, adding two words to the part's)
    assert queries[0] == "ferry leave Olsen"


async def test_a_gap_whose_words_find_nothing_tries_its_phrases_one_at_a_time() -> None:
    from agent_search.research import BuiltinPlanner

    planner = BuiltinPlanner()
    part = "Which media types does the store sell"
    first = await planner.gaps(part, part, [], [part], budget=None)  # type: ignore[arg-type]
    assert first == ["media types store sell", "media types"]
    then = await planner.gaps(part, part, [], [part, *first],
                              budget=None)  # type: ignore[arg-type]
    assert then == ["store sell"]
    assert await planner.gaps(part, part, [], [part, *first, *then],
                              budget=None) == []  # type: ignore[arg-type]


async def test_citations_are_unique_across_rounds() -> None:
    s = searcher()
    report = await s.research("Who founded the bakery that sells cardamom buns and where "
                              "was its founder born?", limit=2)
    ids = [i.citation_id for i in report.items]
    assert len(ids) == len(set(ids)) and all(ids)
    titles = [i.title for i in report.items]
    assert len(titles) == len(set(titles))  # a reference found twice is kept once


async def test_a_failing_source_degrades_the_round_not_the_run() -> None:
    s = searcher(Notes(), Broken())
    report = await s.research(QUESTION, types=["notes", "broken"], limit=1)
    assert report.covered
    assert report.warnings and "the source is down" in report.warnings[0]
    errors = [x.error for r in report.rounds for x in r.searches if x.error]
    assert errors


@pytest.mark.parametrize(("budget", "stopped"), [
    ({"max_searches": 1}, "max_searches"),
    ({"max_rounds": 1}, "max_rounds"),
])
async def test_budgets_stop_the_run_and_are_reported(budget: dict[str, Any],
                                                     stopped: str) -> None:
    notes = Notes()
    s = searcher(notes, **budget)
    report = await s.research(UNCOVERED, limit=1)
    assert report.stopped == stopped
    assert len(notes.queries) <= budget.get("max_searches", 100)
    key = next(iter(budget)).removeprefix("max_")
    assert report.budget[key]["limit"] == budget[next(iter(budget))]


async def test_the_deadline_bounds_the_run() -> None:
    s = searcher(Notes(delay=0.5), deadline=0.2)
    report = await s.research(QUESTION, limit=1)
    assert report.stopped == "deadline"
    assert report.budget["seconds"]["used"] < 2


async def test_nothing_understood_says_so() -> None:
    s = searcher()
    report = await s.research("?! ...")
    assert report.stopped == "nothing_understood" and report.items == []
    assert report.warnings


async def test_nothing_new_stops_early() -> None:
    s = searcher()
    report = await s.research("Which airline flies to Reykjavik and how much is a "
                              "glacier tour?", limit=1)
    assert report.stopped in ("nothing_new", "max_rounds")
    assert not report.covered


async def test_tenancy_reaches_every_search() -> None:
    seen: list[tuple[str | None, str | None]] = []

    class Who(Notes):
        async def search(self, ctx: Any, request: Request) -> Result:
            seen.append((ctx.user_id, ctx.team_id))
            return await super().search(ctx, request)

    s = searcher(Who())
    await s.research(QUESTION, ctx=s.context(user_id="u1", team_id="t1"))
    assert seen and set(seen) == {("u1", "t1")}


def test_the_builtin_plan_reads_structure() -> None:
    assert [p.text for p in plan_question("Do Qdrant and Milvus support sparse vectors?")] \
        == ["Do Qdrant support sparse vectors?", "Do Milvus support sparse vectors?"]
    assert len(plan_question("Which of Postgres, SQLite or DuckDB is embedded?")) == 3
    assert [p.text for p in plan_question("What is a vector database?")] == \
        ["What is a vector database?"]
    assert plan_question("   ") == []


# -- the LLM planner, against the scripted server --------------------------------------------

@pytest.fixture(scope="module")
def llm() -> Iterator[ThreadedChatServer]:
    server = ThreadedChatServer().start()
    yield server
    server.stop()


def llm_searcher(llm: ThreadedChatServer, model: str, **extra: Any) -> Searcher:
    return searcher(Notes(), planner="llm", llm_url=llm.base_url, llm_model=model,
                    **extra)


async def test_an_llm_plan_is_used(llm: ThreadedChatServer) -> None:
    report = await llm_searcher(llm, "delegate").research(
        "when does the ferry leave and when does the museum open", limit=1)
    assert report.planner == "llm"
    assert [p.text for p in report.parts] == ["when does the ferry leave",
                                             "when does the museum open"]
    assert report.covered
    assert report.budget["llm_calls"]["used"] == 1


async def test_an_llm_plan_in_prose_is_read_by_the_shared_parser(llm: ThreadedChatServer
                                                                   ) -> None:
    # citations before the JSON and braces after it: the first JSON object is the plan
    llm.replies["prose"] = ('As [1] suggests, the plan is {"parts": ["when does the ferry '
                            'leave", "when does the museum open"]} (see {the notes}).')
    report = await llm_searcher(llm, "prose").research(QUESTION, limit=1)
    assert report.planner == "llm"
    assert [p.text for p in report.parts] == ["when does the ferry leave",
                                             "when does the museum open"]


async def test_a_looping_llm_is_stopped(llm: ThreadedChatServer) -> None:
    report = await llm_searcher(llm, "delegate", max_rounds=5).research(
        "loop over the glacier tour price and the airline to Reykjavik", limit=1)
    assert report.stopped in ("nothing_new", "max_llm_calls", "max_rounds")
    assert report.budget["llm_calls"]["used"] <= 4
    assert len(report.rounds) < 5


async def test_a_stalling_llm_falls_back_to_the_builtin_plan(llm: ThreadedChatServer) -> None:
    report = await llm_searcher(llm, "stall", llm_timeout=0.5).research(QUESTION, limit=1)
    assert report.planner.startswith("builtin (llm: no answer within")
    assert report.covered


async def test_nonsense_from_the_llm_falls_back(llm: ThreadedChatServer) -> None:
    report = await llm_searcher(llm, "bench").research(QUESTION, limit=1)
    assert report.planner.startswith("builtin (llm:")
    assert len(report.parts) == 2 and report.covered


async def test_no_llm_calls_allowed_means_builtin(llm: ThreadedChatServer) -> None:
    report = await llm_searcher(llm, "delegate", max_llm_calls=0).research(QUESTION, limit=1)
    assert report.planner == "builtin (llm: the LLM-call budget or the deadline is spent)"
    assert llm.requests == [] or all(r.get("model") != "delegate" or "plan" not in str(r)
                                     for r in llm.requests[-1:])


async def test_bad_settings_are_one_clear_error() -> None:
    from agent_search.errors import InputError

    with pytest.raises(InputError, match="research settings: max_rounds"):
        await searcher().research(QUESTION, settings={"max_rounds": 0})
