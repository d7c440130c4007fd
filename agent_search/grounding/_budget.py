"""How much work one answer's grounding may cost.

The check is pure Python and runs in a worker thread of a shared server: while it runs it
holds the interpreter, so every other request of every tenant waits on it. Its cost must
not follow what the model (or an uploaded document it quotes) happened to write. Two
bounds, whichever comes first:

- a count of the one kind of work whose cost per character is far above the rest: jieba's
  part-of-speech HMM on characters its dictionary does not know (~5 ms a character on
  random Han text). Past :data:`MAX_HMM_CHARS` characters per answer, such characters are
  tagged by the dictionary alone (a person's name not in it is then not recognised as a
  name; its words are still checked). This bound is a count, the same on every machine;
- a count of words embedded to align a sentence's words by meaning
  (:data:`MAX_MEANING_WORDS`, :mod:`agent_search.grounding._meaning`): the model runs in
  its own threads, which the CPU bound below does not see. Past it, the overlap is
  lexical;
- the answer's CPU time in its thread (:data:`MAX_CPU_SECONDS`): past it, the sentences
  not yet checked are ``unchecked`` with :data:`OVER_BUDGET` as the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_HMM_CHARS = 200
"""Characters of one answer given to the part-of-speech HMM (names not in the
dictionary): a few dozen names' worth, ~1 s at worst on this machine's random Han text."""
MAX_HMM_RUN = 8
"""A run of unknown characters longer than this is no name: tagged by the dictionary."""
MAX_MEANING_WORDS = 240
"""Words of one answer embedded to align words by meaning: six borderline sentences'
worth (~0.1 s of the model on a quiet core, whatever the answer)."""
MAX_CPU_SECONDS = 0.7
"""CPU seconds one answer's check may take (its thread's time, not the wall clock),
checked between two references and two sentences: one more of either (~0.2 s at most for
a reference of 20,000 Han characters) keeps it under a second."""
MAX_SENTENCE_CHARS = 1_000
"""A longer "sentence" (no sentence end in 1,000 characters) is not read as one claim."""
SHARED_PAUSE = 0.0005
"""Seconds a check in a shared process sleeps between two sentences (and two references):
it runs in a worker thread but holds the interpreter, and a thread that waits for it
(the server's event loop) otherwise gets it only when the interpreter forces a switch
(every 5 ms), once per await. Sleeping hands it over at once; ~0.05 s more for an answer
of 100 sentences."""
OVER_BUDGET = "not checked: the answer's check reached its bound of CPU time"
TOO_LONG = "not checked: too long to read as one sentence"


@dataclass(slots=True)
class Budget:
    """What is left of one answer's bounds; not shared between threads (one per call)."""

    hmm_chars: int = MAX_HMM_CHARS
    meaning_words: int = MAX_MEANING_WORDS
    cpu_seconds: float = MAX_CPU_SECONDS
    clock: Callable[[], float] = time.thread_time
    pause: float = 0.0
    """Seconds to sleep at each :meth:`rest` (:data:`SHARED_PAUSE` in a server)."""
    _deadline: float = field(init=False, default=float("inf"))

    def start(self) -> None:
        """Start the CPU bound, in the thread that does the work (``time.thread_time``
        is the calling thread's)."""
        self._deadline = self.clock() + self.cpu_seconds

    def take_hmm(self, chars: int) -> bool:
        """Whether ``chars`` more characters may go through the HMM (and take them)."""
        if chars > MAX_HMM_RUN or chars > self.hmm_chars:
            return False
        self.hmm_chars -= chars
        return True

    def take_meaning(self, words: int) -> bool:
        """Whether ``words`` more words may be embedded (and take them)."""
        if words > self.meaning_words:
            return False
        self.meaning_words -= words
        return True

    def rest(self) -> None:
        """Between two pieces of work: let a waiting thread have the interpreter."""
        if self.pause > 0:
            time.sleep(self.pause)

    @property
    def exhausted(self) -> bool:
        return self.clock() >= self._deadline
