"""Reading the schema and the values: the models as the parser sees them (fields, names,
units), the known values of categorical fields (the value index), derived forms of values
(demonyms), the models a question names, and names matched by meaning (embeddings).

Private to :mod:`agent_search.query.nl` (its tests reach in, as for its other modules).
"""
