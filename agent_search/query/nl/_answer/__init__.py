"""The answer: what the parser does with a plan once the rules have run — the records asked
for may be another model's (retarget), or the rows the target has many of (children); the
words no rule understood (leftovers); the checks that answer nothing rather than rows
that do not answer the question (unsure, readings); the reading's calibrated confidence;
and the :class:`~agent_search.query.dsl.DSLGenerator` that runs it all (generator).

Private to :mod:`agent_search.query.nl` (its tests reach in, as for its other modules).
"""
