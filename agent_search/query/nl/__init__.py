"""The builtin natural-language parser, piece by piece.

- :mod:`~agent_search.query.nl.lexicon`: stopwords, words and phrases, plural forms, stems;
- :mod:`~agent_search.query.nl.dates`: calendar periods and the bounds of stated dates.

The parser itself (:mod:`agent_search.query.dsl_builtin`) uses these; its extractors move
here one at a time.
"""
