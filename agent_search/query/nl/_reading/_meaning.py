"""Phrases matched to model and field names by meaning, with the embedding model.

A second reading for words the name matching left over ("attendance" for a field
``Average``, "death toll" for ``killed``, "nations" for a model ``country``): each run of
leftover words (and each of its words) is embedded, compared with the embeddings of the
schema's names, and the closest name above the schema's own floor replaces the phrase in
the question, which is then parsed again (:class:`~agent_search.query.nl.BuiltinDSLGenerator`
keeps the second reading only when it understood more).

The floor is not a constant: it is how similar the schema's *unrelated* names are to each
other (the ``FLOOR_QUANTILE`` of the similarities between its distinct names), so a
schema of names that all look alike asks for more. A phrase must also be closer to its
best name than to the second best by ``MARGIN`` of the spread of those similarities.
The names' vectors are computed once per set of names and cached; every embedding runs
in a worker thread.

A model is also named by a synonym ("students" for a table ``Highschooler``, "films" for
``movie``), which MiniLM places nearer the model's name than a name of another kind of
thing: a phrase (as said, or its singular: tables are named in the singular) is read as a
model when it is nearer that model than any other name of the schema, above
:data:`MIN_SIMILARITY` and above how alike the schema's models are to each other (the
closest pair of distinct model names: a phrase no nearer a model than two models are to
each other tells nothing), and ahead of the next model by ``MARGIN`` of the spread. That
lets a synonym through where the mixed reading would not ("student" is 0.59 from
``highschooler`` and 0.57 from its field ``grade``: too close to tell a name from a name,
but a field of the model itself is no rival reading of which table is meant); a phrase
nearer a field is read as a field or not at all, and no phrase is read as a model but
by this rule. A phrase nearest a model's name (above :data:`MIN_SIMILARITY`) that fails
the rule is a doubt about which table is meant: :func:`doubted` answers nothing then,
and says why ("buyers" between ``customer`` and ``client``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np

from agent_search.language import normal_form
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._lexicon import is_plural, plural_forms
from agent_search.query.nl._plan import NOTHING_CONFIDENCE
from agent_search.query.nl._reading._schema import model_mentions
from agent_search.query.nl._rules._aggregate_words import NUMBER_WORDS

if TYPE_CHECKING:
    from agent_search.config import SearchConfig

Embed = Callable[[list[str]], Any]
"""Texts → unit vectors (rows), synchronous (run in a worker thread here)."""

FLOOR_QUANTILE = 0.95
"""A phrase must be closer to a name than 95% of the schema's name pairs are to each other."""
MARGIN = 0.5
"""... and beat the second-closest name by half a standard deviation of the name pairs."""
MIN_SIMILARITY = 0.5
"""... and be at least this similar at all (the model's cosine): in a small schema of
unlike names the floor can sit lower, and "come" read as ``course`` at 0.42 is no link."""
MIN_NAMES = 5
"""Fewer names than this: too few pairs to tell what "unrelated" looks like; no reading."""
MAX_PHRASE_WORDS = 3
GRAMMAR_WORDS = frozenset({
    "least", "most", "more", "less", "fewer", "fewest", "than", "each", "every", "all",
    "any", "both", "either", "neither", "only", "also", "much", "many", "several",
    "highest", "lowest", "largest", "smallest", "biggest", "greatest", "maximum", "minimum",
})
"""Words of quantity, comparison and degree: the language's, never a schema's name ("at
*least* two" was read as a model ``course`` by meaning)."""
_CACHE = 64
_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_text(name: str) -> str:
    """``Net_Worth_Millions`` → ``net worth millions``; ``HireDate`` → ``hire date``."""
    return " ".join(w.lower() for w in _SPLIT.findall(name))


@dataclass(frozen=True)
class _Names:
    texts: list[str]
    vectors: Any  # (n, d) unit rows
    floor: float
    spread: float


@dataclass(frozen=True)
class Reading:
    """A phrase of the question read as a name."""

    phrase: str
    name: str
    similarity: float


class Readings(list[Reading]):
    """The readings of a question's phrases, and ``doubts``: why a phrase that may name a
    table was not read as one (one line each)."""

    def __init__(self, found: Sequence[Reading] = (), doubts: Sequence[str] = ()) -> None:
        super().__init__(found)
        self.doubts = list(doubts)


class NameMeanings:
    """The names of the schemas a question is read against, embedded once (see module)."""

    def __init__(self, embed: Embed) -> None:
        self._embed = embed
        self._names: OrderedDict[tuple[str, ...], _Names | None] = OrderedDict()
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    @classmethod
    def for_config(cls, config: SearchConfig) -> NameMeanings:
        """With the offline MiniLM as shipped (:func:`~agent_search.embedding.shipped_embedder`),
        whatever model the kb is configured with — names are read the same way on every
        deployment. Loaded on first use or by :meth:`warm`."""
        from agent_search.embedding import shipped_embedder

        home = Path(config.home)
        return cls(lambda texts: shipped_embedder(home).embed(texts))

    def warm(self) -> None:
        """Load the model in a background thread now (once), so that the first question
        does not wait for it; a failure is left for the first reading to report."""
        with self._lock:
            if self._warming is not None:
                return
            # not a daemon: a process that ends while the model loads waits for it (a
            # daemon thread inside onnxruntime at interpreter exit aborts the process)
            self._warming = threading.Thread(target=self._warm, name="name-meanings",
                                             daemon=False)
        self._warming.start()

    async def ready(self) -> None:
        """:meth:`warm`, then wait (in a worker thread) until the model has loaded."""
        self.warm()
        assert self._warming is not None
        await anyio.to_thread.run_sync(self._warming.join)

    def _warm(self) -> None:
        try:
            self._embed(["warm"])
        except Exception:  # reported by the first reading, with its cause
            return

    def _names_of(self, texts: tuple[str, ...]) -> _Names | None:
        with self._lock:
            if texts in self._names:
                self._names.move_to_end(texts)
                return self._names[texts]
        found: _Names | None = None
        if len(texts) >= MIN_NAMES:
            vectors = np.asarray(self._embed(list(texts)), dtype=np.float32)
            sims = vectors @ vectors.T
            pairs = sims[np.triu_indices(len(texts), k=1)]
            found = _Names(list(texts), vectors, float(np.quantile(pairs, FLOOR_QUANTILE)),
                           float(pairs.std()))
        with self._lock:
            self._names[texts] = found
            while len(self._names) > _CACHE:
                self._names.popitem(last=False)
        return found

    def _read(self, question: str, leftover: Sequence[str],
              schemas: Sequence[ModelSchema]) -> Readings:
        texts = tuple(sorted(_schema_names(schemas)))
        names = self._names_of(texts)
        if names is None:
            return Readings()
        low = question.lower()
        phrases = _phrases(low, [w.lower() for w in leftover if _may_name(question, w)])
        if not phrases:
            return Readings()
        sims, either = self._similarities(phrases, names)
        models = _Models.of(names, schemas)
        out = Readings(models.surest(phrases, sims, either, low))
        if not model_mentions(normal_form(question), schemas):  # which table is open
            out.doubts = models.doubts(phrases, either, [r.phrase for r in out])
        return out

    def _similarities(self, phrases: list[str], names: _Names) -> tuple[Any, Any]:
        """The phrases' similarities to the names as said, and the larger of that and
        their singular's (one batch): a table is named in the singular, and MiniLM puts
        "students" at 0.47 from ``highschooler``, "student" at 0.59."""
        vectors = np.asarray(self._embed([*phrases, *map(_singular, phrases)]),
                             dtype=np.float32)
        said = vectors[:len(phrases)] @ names.vectors.T
        return said, np.maximum(said, vectors[len(phrases):] @ names.vectors.T)

    async def readings(self, question: str, leftover: Sequence[str],
                       schemas: Sequence[ModelSchema]) -> Readings:
        """The leftover phrases of ``question`` read as names of ``schemas``."""
        if not leftover:
            return Readings()
        return await anyio.to_thread.run_sync(self._read, question, list(leftover),
                                              list(schemas))


def _reading(names: _Names, sims: Any, phrase: str) -> Reading | None:
    """The name ``phrase`` is read as, from its similarities ``sims`` to ``names``: above
    the schema's floor (and :data:`MIN_SIMILARITY`), clearly closer than the second
    closest (:data:`MARGIN` of the spread), and not the phrase itself."""
    order = np.argsort(-sims)
    best, second = float(sims[order[0]]), float(sims[order[1]])
    name = names.texts[int(order[0])]
    if best < max(names.floor, MIN_SIMILARITY) or best - second < MARGIN * names.spread \
            or name == phrase:
        return None
    return Reading(phrase, name, round(best, 3))


@dataclass(frozen=True)
class _Models:
    """The schema's queryable models among its names: where they are in ``names`` and
    how alike the closest two are (the floor of a reading as a model)."""

    names: _Names
    at: list[int]
    floor: float

    @classmethod
    def of(cls, names: _Names, schemas: Sequence[ModelSchema]) -> _Models:
        own = {name_text(s.id.rsplit(".", 1)[-1]) for s in schemas if s.queryable}
        at = [i for i, text in enumerate(names.texts) if text in own]
        vectors = names.vectors[at]
        pairs = (vectors @ vectors.T)[np.triu_indices(len(at), k=1)]
        return cls(names, at, float(pairs.max()) if len(pairs) else 1.0)

    def read(self, phrase: str, said: Any, either: Any) -> Reading | None:
        """``phrase`` read as a model (:meth:`reading`, on ``either``: as said or in the
        singular), else as a field of the mixed names (:func:`_reading` on ``said``)."""
        return self.reading(either, phrase) or self.field(_reading(self.names, said, phrase))

    def field(self, reading: Reading | None) -> Reading | None:
        """A reading of the mixed names kept only when it is a field's: a model is read
        under :meth:`reading`'s rule alone ("buyers" at 0.50 from ``customer`` is no
        reading when ``customer`` and ``client`` are 0.61 alike)."""
        if reading is None or any(self.names.texts[i] == reading.name for i in self.at):
            return None
        return reading

    def reading(self, sims: Any, phrase: str) -> Reading | None:
        """``phrase`` read as a model (see the module): nearer it than any other name,
        above :data:`MIN_SIMILARITY` and :attr:`floor`, ahead of the next model by
        :data:`MARGIN` of the spread; None when fewer than two models compete."""
        if len(self.at) < 2:
            return None
        mine = sims[self.at]
        order = np.argsort(-mine)
        best, second = float(mine[order[0]]), float(mine[order[1]])
        name = self.names.texts[self.at[int(order[0])]]
        if best < float(sims.max()) or best < max(self.floor, MIN_SIMILARITY) or \
                best - second < MARGIN * self.names.spread or name == phrase:
            return None
        return Reading(phrase, name, round(best, 3))


    def surest(self, phrases: list[str], said: Any, either: Any, low: str) -> list[Reading]:
        """Each phrase read (:meth:`read`), the surest first: none within a phrase read
        already, nor read as a name read already or said in the question (``low``)."""
        out: list[Reading] = []
        for i in np.argsort(-said.max(axis=1)):
            phrase = phrases[int(i)]
            if _within(phrase, [r.phrase for r in out]):
                continue
            reading = self.read(phrase, said[i], either[i])
            if reading is not None and reading.name not in low and \
                    all(r.name != reading.name for r in out):
                out.append(reading)
        return out

    def doubts(self, phrases: list[str], either: Any, taken: list[str]) -> list[str]:
        """:meth:`doubt` of each phrase not read (nor inside one read)."""
        return [d for i, p in enumerate(phrases)
                if not _within(p, taken) and (d := self.doubt(p, either[i])) is not None]

    def doubt(self, phrase: str, sims: Any) -> str | None:
        """Why ``phrase``, nearest a model's name of all the schema's names and above
        :data:`MIN_SIMILARITY`, was not read as that model (:meth:`reading` declined);
        None when it is not so near a model, or was read."""
        if len(self.at) < 2 or self.reading(sims, phrase) is not None:
            return None
        mine = sims[self.at]
        order = np.argsort(-mine)
        best, second = float(mine[order[0]]), float(mine[order[1]])
        if best < float(sims.max()) or best < MIN_SIMILARITY:
            return None
        first, other = (self.names.texts[self.at[int(i)]] for i in order[:2])
        return (f"{phrase!r} may name the table {first!r} ({best:.2f}), but not clearly "
                f"more than {other!r} ({second:.2f}; the tables themselves are "
                f"{self.floor:.2f} alike); no records are shown (they may be of another "
                "table than the one asked about)")


def _within(phrase: str, taken: list[str]) -> bool:
    """``phrase`` is within a phrase of ``taken``, or holds one."""
    return any(phrase in t or t in phrase for t in taken)


def doubted(out: dict[str, Any], readings: Readings) -> dict[str, Any]:
    """``out`` as answered, unless a phrase may name a table it was not read as
    (:attr:`Readings.doubts`): then nothing, and why — records of a table the question
    may not be about are worse than none."""
    if not readings.doubts:
        return out
    return {"queries": [], "explanation": "not sure which table is asked about; nothing "
            "searched", "confidence": NOTHING_CONFIDENCE,
            "warnings": [*out.get("warnings", []), *readings.doubts]}


def _singular(phrase: str) -> str:
    """The phrase with its last word in the singular ("students" → "student", "people"
    → "person"), or as it is."""
    if not is_plural(phrase):
        return phrase
    forms = [f for f in plural_forms(phrase) if f != phrase and not is_plural(f)]
    return min(forms, key=len) if forms else phrase


def rewrite(question: str, readings: Sequence[Reading]) -> str:
    """``question`` with each phrase replaced by the name it was read as."""
    out = question
    for r in readings:
        out = re.sub(r"(?<!\w)" + re.escape(r.phrase) + r"(?!\w)", r.name, out, count=1,
                     flags=re.I)
    return out


def _may_name(question: str, word: str) -> bool:
    """Not a number nor a word of quantity or degree, and not written as a name
    (capitalised after the question's first word: "Gelderland" is a value, for the value
    matching, not a field)."""
    if word[:1].isdigit() or word.lower() in NUMBER_WORDS or word.lower() in GRAMMAR_WORDS:
        return False
    for m in re.finditer(r"(?<!\w)" + re.escape(word) + r"(?!\w)", question):
        if m.start() > 0 and question[:m.start()].strip() and word[:1].isupper():
            return False
    return True


def _schema_names(schemas: Sequence[ModelSchema]) -> set[str]:
    names = set()
    for s in schemas:
        names.add(name_text(s.id.rsplit(".", 1)[-1]))
        for f in s.fields:
            if not f.primary and not f.name.startswith("__yao_"):
                names.add(name_text(f.name))
    names.discard("")
    return names


def _phrases(low: str, words: list[str]) -> list[str]:
    """Runs of leftover words adjacent in the question (up to MAX_PHRASE_WORDS), longest
    first, then each word alone."""
    spans = sorted((m.start(), m.end(), w) for w in dict.fromkeys(words)
                   if (m := re.search(r"(?<!\w)" + re.escape(w) + r"(?!\w)", low)))
    out = [" ".join(r) for r in _runs(low, spans) if len(r) > 1]
    return out + [w for _, _, w in spans]


def _runs(low: str, spans: list[tuple[int, int, str]]) -> list[list[str]]:
    """The words of ``spans`` (in question order) in runs of words with only spaces
    between, up to MAX_PHRASE_WORDS each."""
    runs: list[list[str]] = []
    last_end = -2
    for start, end, w in spans:
        if runs and not low[last_end:start].strip() and len(runs[-1]) < MAX_PHRASE_WORDS:
            runs[-1].append(w)
        else:
            runs.append([w])
        last_end = end
    return runs
