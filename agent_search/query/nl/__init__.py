"""The builtin natural language → QueryDSL generator: rules, no LLM.

It reads the query against the model schemas and the known values of their categorical
fields, and understands:

- which model is meant: the one named first (singular or plural: "tracks", "invoice
  lines"), or, when none is named, the one the query says most about (its values, fields
  and amounts; ties go to the model listed first);
- equality on categorical fields, matched to real values case-insensitively, fuzzily
  (rapidfuzz) for misspellings, directly or through up to two relations ("tracks in the
  Jazz genre" → ``genre.Name = 'Jazz'``, "tracks by AC/DC" → ``album.artist.Name``);
  several values of one field become ``in``; "not"/"except" before a value negates it;
- numeric comparisons with currency and units ("under $100", "more than 5", "between 10
  and 20", "longer than 5 minutes" on a field whose unit is ms/s/min/h), "in stock";
- counts over hasMany relations ("artists with more than 5 albums");
- dates ("after 2024-03-01", "before 2023", "in March 2025", "from 2010 to 2012") and
  relative ones ("in the last 30 days", "this month", "last year", "yesterday"; ``now``
  is injectable);
- text match: quoted text, "named/called/titled X", "containing X", "with X in the title"
  → ``like`` on the mentioned text field or the model's title field; "who work at X" on
  the company field; "composed/written/directed by X" on the field naming the doer
  (``Composer``); date fields are also named by their event ("hired after 2003");
- ordering and top-N ("the 5 most expensive", "latest", "cheapest", "in alphabetical
  order", "sorted by total desc").

Words left over when no value was recognised become a text match on the model's title and
content fields (or a related model's title: "orders of headphones" → ``product.name``),
with ranking ``terms`` and ``relax`` (dropped if it finds nothing: "music genres"); beside
a recognised value they are ignored with a warning, unless no model is named ("laptops by
Apex": a text match with ``relax``). A query
naming no model and stating nothing falls back to a text match on every model
(``fallback: true``, confidence 0.5), or, with ``strict``, is an error. Work is bounded:
the first 500 characters are analysed and at most 16 conditions kept.

It also computes (issue 23, see ``docs/database.md``): aggregates ("the average, minimum
and maximum age", "how many singers in each country", "the most common citizenship",
"hometowns shared by at least two teachers", "teachers and the number of courses",
"how many different nationalities") as ``group_by`` / ``aggregates`` / ``having``;
superlative adjectives by what they measure ("youngest" → age, "tallest" → height); order
words beside a field; numbers after a numeric field ("grade 10"); and the records of the
model holding an asked field ("the names of poker players" → people).

The modules are private (``_name``); the names above are the package's public ones.
At its ground: :mod:`._lexicon` (words, stopwords, ``inflect`` forms), :mod:`._plan` (the
parser's explicit state: :class:`Question`, :class:`Plan` and the typed ``Draft`` of its
answer) and :mod:`._parser` (the ordered extractors and what becomes of their plan). Three
wings: ``_reading`` (the schema and the values: the models as the parser sees them, the
value index, units, demonyms, names by meaning), ``_rules`` (one module per kind of rule:
dates, numbers, counts, orders, measures, aggregates, text, values, flags, computed
values; a ``_zh`` twin where Chinese says it otherwise) and ``_answer`` (retarget,
children, leftover words, the right-or-silent checks, the calibrated confidence, and the
:class:`~agent_search.query.dsl.DSLGenerator`).
"""

from agent_search.query.nl._answer._generator import BuiltinDSLGenerator
from agent_search.query.nl._lexicon import words_of
from agent_search.query.nl._parser import EXTRACTORS, parse, understand
from agent_search.query.nl._plan import Extractor, Plan, Question
from agent_search.query.nl._reading._meaning import NameMeanings
from agent_search.query.nl._reading._named import named_models
from agent_search.query.nl._rules._values import FUZZY_CUTOFF

__all__ = ["EXTRACTORS", "FUZZY_CUTOFF", "BuiltinDSLGenerator", "Extractor", "NameMeanings",
           "Plan", "Question", "named_models", "parse", "understand", "words_of"]
