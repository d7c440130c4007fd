"""What the offline embedders share: onnxruntime sessions, a fast tokenizer, batching
texts of similar length, and mean pooling.

Every session is single-threaded. A batch embedding runs ``workers`` sessions side by side,
each on its own batches (onnxruntime releases the GIL): for models this small that beats one
session whose thread pool splits every operator (measured on 2 cores: ~1.2× the
throughput), and a query — a few dozen tokens — gains nothing from a pool whose threads
keep spinning after the call and starve the search that follows.

The model is called through onnxruntime and ``tokenizers`` directly: the tokenizer is
called once per batch, padded to the batch's longest text, and the mean pooling is a few
numpy operations, which keeps a short query's embedding near the model's own run time.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agent_search.errors import RunError

Vectors = NDArray[np.float32]


class EmbeddingError(RunError):
    """The embedding model cannot be loaded or called; the message says what to do."""


def default_workers() -> int:
    """The CPUs this process may run on, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


_SLOW_FUSIONS = ["SkipLayerNormFusion"]


def ort_session(path: Path) -> Any:
    """A single-threaded CPU session of the ONNX file at ``path``.

    onnxruntime's memory arena keeps the largest batch's buffers for good; with batches
    capped at ``batch_size`` × ``max_tokens`` (8 × 256) it stays small, and turning it off
    measured slower here (allocation on every call). The fusion of a residual ``Add`` and a
    ``LayerNormalization`` into ``SkipLayerNormalization`` is turned off: that kernel
    measured ~5× slower than the two operators apart (onnxruntime 1.32, one thread), 15%
    of an encoder's run time."""
    try:
        import onnxruntime as ort  # type: ignore[import-untyped]
    except ImportError as exc:
        raise EmbeddingError("the package 'onnxruntime' is not installed "
                             "(pip install onnxruntime)") from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=_SLOW_FUSIONS)
    except Exception as exc:
        raise EmbeddingError(f"cannot load the embedding model {path}: "
                             f"{type(exc).__name__}: {exc}".splitlines()[0]) from exc


class LocalEmbedder:
    """Base of the offline embedders: subclasses name their tokenizer file, load a
    session and run one padded batch (:meth:`_run`)."""

    model_id: str
    dimensions: int
    max_tokens: int
    pad: tuple[int, str] = (0, "[PAD]")  # the tokenizer's padding id and token

    def __init__(self, model_dir: Path, *, batch_size: int = 8,
                 workers: int | None = None) -> None:
        self.model_dir = model_dir
        self.batch_size = batch_size
        self.workers = workers or default_workers()
        self._sessions_list: list[Any] = []
        self._tokenizer: Any = None
        self._encoder: Any = None
        self._lock = threading.Lock()

    # -- subclass hooks
    def _tokenizer_file(self) -> Path:
        return self.model_dir / "tokenizer.json"

    def _load_session(self) -> Any:
        raise NotImplementedError

    def _run(self, session: Any, texts: list[str]) -> Vectors:
        raise NotImplementedError

    # -- shared parts
    @staticmethod
    def _ort_session(path: Path) -> Any:
        return ort_session(path)

    def _sessions(self, count: int) -> list[Any]:
        with self._lock:
            while len(self._sessions_list) < count:
                self._sessions_list.append(self._load_session())
            return self._sessions_list[:count]

    def _load_tokenizer(self) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError("the package 'tokenizers' is not installed "
                                 "(pip install tokenizers)") from exc
        try:
            return Tokenizer.from_file(str(self._tokenizer_file()))
        except Exception as exc:
            raise EmbeddingError(f"cannot load the tokenizer {self._tokenizer_file()}: "
                                 f"{exc}".splitlines()[0]) from exc

    @property
    def tokenizer(self) -> Any:
        """A fast tokenizer of the model without padding or truncation (to count tokens)."""
        if self._tokenizer is None:
            tok = self._load_tokenizer()
            tok.no_padding()
            tok.no_truncation()
            self._tokenizer = tok
        return self._tokenizer

    def _encode(self, texts: list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Token ids and attention mask of ``texts``, truncated at ``max_tokens`` and
        padded to the longest."""
        if self._encoder is None:
            with self._lock:
                if self._encoder is None:
                    tok = self._load_tokenizer()
                    tok.enable_truncation(self.max_tokens)
                    tok.enable_padding(pad_id=self.pad[0], pad_token=self.pad[1])
                    self._encoder = tok
        encodings = self._encoder.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return ids, mask

    @staticmethod
    def _pool(hidden: NDArray[np.float32], mask: NDArray[np.int64]) -> Vectors:
        """Mean of the unmasked tokens' vectors, L2-normalised."""
        weights = mask.astype(np.float32)[:, :, None]
        summed = (hidden * weights).sum(axis=1)
        mean = summed / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(mean, axis=1, keepdims=True)
        out: Vectors = (mean / np.maximum(norms, 1e-12)).astype(np.float32)
        return out

    def embed_query(self, text: str) -> Vectors:
        """One query, on the first single-threaded session."""
        vector: Vectors = self._run(self._sessions(1)[0], [text])[0]
        return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors for ``texts``, in order. Inputs are sorted by length (characters: a
        close enough proxy for tokens, and free) and batched with their neighbours so
        that little of a batch is padding; the batches go to the parallel sessions."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[s:s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        sessions = self._sessions(min(self.workers, len(batches)))
        if len(sessions) == 1:
            for idx in batches:
                out[idx] = self._run(sessions[0], [texts[i] for i in idx])
            return out
        free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for session in sessions:
            free.put(session)

        def run(idx: list[int]) -> None:
            session = free.get()
            try:
                out[idx] = self._run(session, [texts[i] for i in idx])
            finally:
                free.put(session)

        # longest first, so the last batches to finish are the short ones
        with ThreadPoolExecutor(len(sessions), thread_name_prefix="kb-embed") as pool:
            for done in [pool.submit(run, idx) for idx in reversed(batches)]:
                done.result()
        return out


@contextlib.contextmanager
def model_folder_build(target: Path, marker: str) -> Iterator[Path]:
    """A temporary folder beside ``target`` to build a model folder in, renamed into
    place when the block ends, removed whatever happens. Processes that build the same
    folder at once do not see each other's half-built files: the first rename wins, and a
    later one that fails is fine when ``target/marker`` (the file written last) is there."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        yield tmp
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first
            if not (target / marker).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
