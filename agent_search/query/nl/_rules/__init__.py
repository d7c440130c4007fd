"""The rules: one module per kind of thing a question states (dates, numbers, counts over
relations, orders and superlatives, measures, aggregates, text matches, known values,
flags, computed values), each an :data:`~agent_search.query.nl.Extractor` run in the
order of :data:`~agent_search.query.nl.EXTRACTORS`; a ``_zh`` module beside a rule reads
the same thing said in Chinese.

Private to :mod:`agent_search.query.nl` (its tests reach in, as for its other modules).
"""
