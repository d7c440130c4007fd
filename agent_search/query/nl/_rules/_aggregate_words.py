"""The words of aggregate questions, shared by the rules on the target's own fields
(:mod:`~agent_search.query.nl._rules._aggregates`) and on the rows it has many of
(:mod:`~agent_search.query.nl._answer._children`): aggregate functions, "how many", "each", "the
most", count comparators; and how a group is added to a plan."""

from __future__ import annotations

import re

from agent_search.query.nl._plan import Plan, Question

FN = re.compile(r"\b(?P<fn>average|avg|mean|maximum|max|minimum|min|total|sum|"
                r"highest|lowest|largest|smallest|oldest|youngest)\b", re.I)
FN_NAME = {"average": "avg", "avg": "avg", "mean": "avg", "maximum": "max", "max": "max",
           "minimum": "min", "min": "min", "total": "sum", "sum": "sum",
           "highest": "max", "largest": "max", "lowest": "min", "smallest": "min",
           "oldest": "max", "youngest": "min"}
WEAK_FN = frozenset({"highest", "lowest", "largest", "smallest", "oldest", "youngest"})
"""Superlatives: an aggregate only beside a real aggregate word ("the maximum and lowest
age"), else an order of records ("the singer with the highest age")."""
GLUE = re.compile(r"^(?:\s*(?:,|and|or|the|of|its|their|all|values?|\s)\s*)*$", re.I)
HOW_MANY = re.compile(r"\b(?:how many|(?:total\s+)?number of|count(?:\s+of)?)\s+(?:the\s+|all\s+)?"
                      r"(?P<distinct>(?:different|distinct|unique)\s+)?", re.I)
EACH = re.compile(r"\b(?:each|every|per)(?:\s+|$)(?:of\s+(?:the|these|those|its|their)\s+)?"
                  r"(?:different\s+|single\s+|listed\s+|distinct\s+)?", re.I)
COMMON = re.compile(r"\b(?P<dir>most|least)\s+(?:common|frequent|popular|usual)(?:\s+|$)",
                    re.I)
MOST_OF = re.compile(r"\b(?:(?P<most>most|(?:greatest|largest|highest|biggest)\s+(?:number|"
                     r"amount|count)\s+of)|(?P<least>least|fewest|(?:smallest|lowest)\s+"
                     r"(?:number|amount|count)\s+of))\s+(?:number\s+of\s+|of\s+(?:the\s+)?)?$",
                     re.I)
N = r"(?:\d{1,6}|one|two|three|four|five|six|seven|eight|nine|ten)"
HAVING = re.compile(r"\b(?:more than|over|greater than|at least|fewer than|less than|"
                    r"at most|exactly|only)\s+(?P<n>" + N + r")\s+$"
                    r"|\b(?P<n2>" + N + r")\s+or\s+(?P<after>more|fewer|less)\s+$", re.I)
HAVING_AFTER = {"more": ">=", "fewer": "<=", "less": "<="}
HAVING_OP = {"more than": ">", "over": ">", "greater than": ">", "at least": ">=",
             "fewer than": "<", "less than": "<", "at most": "<=", "exactly": "=",
             "only": "="}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def add_group(q: Question, plan: Plan, field: str, span: tuple[int, int], why: str) -> None:
    """Group by ``field`` (once), understood from the words at ``span``."""
    if field in plan.group_by:
        return
    plan.group_by.append(field)
    plan.notes.append(f"per {field} (\"{why}\")")
    plan.evidence += 1.0
    plan.used.append(span)
