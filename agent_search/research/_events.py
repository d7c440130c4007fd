"""The events of a research run, on the same sink as the searches' own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_search.events import Event


@dataclass(slots=True)
class ResearchPlan(Event):
    """The parts the question was read into, and by which planner."""

    event: ClassVar[str] = "research_plan"
    parts: list[str] = field(default_factory=list)
    planner: str = "builtin"
    budget: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class ResearchRound(Event):
    """One round done: its searches, how many new references, which parts are covered."""

    event: ClassVar[str] = "research_round"
    round: int = 0
    searches: list[dict[str, Any]] = field(default_factory=list)
    new_references: int = 0
    covered: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ResearchGap(Event):
    """A part no reference covers yet, and what the next round searches for it."""

    event: ClassVar[str] = "research_gap"
    round: int = 0
    part: str = ""
    queries: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ResearchDone(Event):
    """Why the run stopped, and what it spent of each budget."""

    event: ClassVar[str] = "research_done"
    stopped: str = ""
    covered: int = 0
    parts: int = 0
    budget: dict[str, dict[str, float]] = field(default_factory=dict)
