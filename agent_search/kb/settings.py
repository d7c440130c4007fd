"""Typed settings of the ``kb`` section (``config.kb``), validated once per handler.

The core config keeps unknown keys of the ``kb`` section; this model gives them types,
defaults and one-line errors naming the key (``kb.chunk_tokens: ...``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Literal, get_args

from pydantic import AliasChoices, ConfigDict, Field, field_validator, model_validator

from agent_search.config import KBConfig, SearchConfig
from agent_search.embedding import DEFAULT_MODEL as DEFAULT_MODEL
from agent_search.embedding import E5_MODEL as E5_MODEL
from agent_search.embedding import OFFLINE_MODELS
from agent_search.errors import did_you_mean

SearchMode = Literal["hybrid", "dense", "sparse"]
MODES: tuple[SearchMode, ...] = get_args(SearchMode)
"""The retrieval modes, written once: the settings, the search options, the CLI and the
Semantic Kernel connector check against this."""
FusionMethod = Literal["calibrated", "zscore", "rrf", "dbsf"]
EmbeddingProvider = Literal["fastembed", "openai"]
Int8Mode = Literal["dynamic", "weights"]
ScoreScale = Literal["background", "reference"]
CJKTerms = Literal["words", "bigrams"]

BUILTIN_STORES: tuple[str, ...] = ("edge", "qdrant")
"""The ``kb.store`` names the package ships (the store package's table holds them too;
a test keeps the two equal)."""
STORE_ENTRY_POINT_GROUP = "agent_search.kb_stores"
"""The entry-point group plug-in stores register under, by ``kb.store`` name."""


def store_names() -> tuple[str, ...]:
    """Every ``kb.store`` name: the builtin ones, then the plug-ins' entry-point names
    (read from the installed packages' metadata, without loading a store)."""
    plugins = sorted({point.name for point in entry_points(group=STORE_ENTRY_POINT_GROUP)})
    return (*BUILTIN_STORES, *(name for name in plugins if name not in BUILTIN_STORES))



class KBSettings(KBConfig):
    """Everything the kb handler, ingestion and evaluation are configured by (the core's
    part, ``enabled`` / ``min_score`` / ``max_results`` / ``collections`` / ``url`` /
    threshold`` / ``graph``, is inherited from :class:`KBConfig`)."""

    model_config = ConfigDict(extra="forbid")
    section = "kb"

    api_key_env: str | None = Field(default=None, description="env var holding the server key")
    store: str | None = Field(default=None, description=(
        "the store: 'edge' (Qdrant's engine in the process, under the data home) or "
        "'qdrant' (a Qdrant server at kb.url), or a plug-in's name; default: 'qdrant' "
        "when kb.url is set, else 'edge'"))

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str | None) -> str | None:
        """The name as the table spells it, one of :func:`store_names`: a misspelt store
        is an error at load, with the name it is likely a typo of, not when the store is
        first opened. The names come from the entry points' metadata: the store package
        sits below these settings and is not imported by them."""
        if value is None:
            return None
        value = value.strip().lower()
        if value not in BUILTIN_STORES:
            names = store_names()
            if value not in names:
                raise ValueError(f"unknown store {value!r}; one of {', '.join(names)}"
                                 f"{did_you_mean(value, names)}")
        return value

    # embeddings (recorded per collection at creation; later ingests must agree)
    embedding_provider: EmbeddingProvider = "fastembed"
    embedding_model: str = Field(
        default=DEFAULT_MODEL, validation_alias=AliasChoices("embedding_model", "model"),
        description=(
            "the embedding model (also 'kb.model'): offline, "
            "'sentence-transformers/all-MiniLM-L6-v2' (English) or "
            "'intfloat/multilingual-e5-small' (~100 languages); short names work too; with "
            "provider 'openai', the endpoint's model name"))
    embedding_url: str | None = Field(
        default=None, description="base URL of an OpenAI-compatible /embeddings endpoint"
    )
    embedding_dimensions: int | None = Field(default=None, ge=1, le=16_384)
    max_tokens: int = Field(default=256, ge=16, le=512, description="model input cap")
    batch_size: int = Field(default=8, ge=1, le=256, description="texts per model call")
    int8: Int8Mode = Field(default="dynamic", description=(
        "how the int8 MiniLM computes: 'dynamic' = int8 matrix products (weights per "
        "channel, activations quantised per call; uses VNNI/AMX where the CPU has them); "
        "'weights' = the shipped file as is, int8 weights widened to float32 at load"))
    embed_workers: int | None = Field(default=None, ge=1, le=64, description=(
        "single-threaded model sessions that embed batches in parallel at ingest; "
        "default: the CPUs this process may use, at most 8"))

    # ingest limits (checked before a file is read; see agent_search.kb.ingest)
    max_file_mb: float = Field(default=20, gt=0, le=100_000, description=(
        "largest file ingested, in MB (1 MB = 10^6 bytes); a bigger file is skipped and "
        "reported. Also caps the text extracted from one file (PDF, HTML)"))
    max_run_mb: float = Field(default=1_000, gt=0, le=1_000_000, description=(
        "most input one ingest reads, in MB; files beyond it are skipped and reported"))
    max_parse_seconds: float = Field(default=60, gt=0, le=86_400, description=(
        "longest one file (PDF, HTML, office) may take to parse, in a child process; a "
        "file over it is skipped and reported, and the rest goes on"))
    max_pages: int = Field(default=5_000, ge=1, le=1_000_000, description=(
        "most pages (PDF) or slides (PPTX) one file may have; more and it is skipped"))
    max_decompressed_mb: float = Field(default=200, gt=0, le=100_000, description=(
        "most bytes a file may decompress to while parsed (PDF content streams, the parts "
        "of .docx/.pptx/.xlsx), in MB; more and it is skipped"))
    max_ocr_pages: int = Field(default=100, ge=1, le=1_000_000, description=(
        "most pages of one file read by OCR (images, TIFF frames, scanned PDF pages); the "
        "rest are left unread and reported"))
    max_image_megapixels: float = Field(default=50, gt=0, le=100_000, description=(
        "largest page image read by OCR, in millions of pixels, checked from the image's "
        "header before it is decoded (a bigger one is skipped: a decompression bomb)"))
    max_ocr_seconds: float = Field(default=300, gt=0, le=86_400, description=(
        "most seconds of OCR for one file; the pages read by then are kept, the rest "
        "reported"))
    max_ocr_page_seconds: float = Field(default=120, gt=0, le=86_400, description=(
        "longest OCR of one page may take; past it the file is skipped and reported"))
    ocr_workers: int | None = Field(default=None, ge=1, le=64, description=(
        "pages of one file read by OCR at once, each on a core and ~300 MB of the parser's "
        "address space; default: the CPUs this process may use, as many as fit in "
        "max_parse_memory_mb (2 in 2,048 MB), for a local ingest (CLI, Python), 1 for "
        "files uploaded (HTTP), so one tenant's scan leaves the other cores to searches"))
    max_parse_memory_mb: int = Field(default=2_048, ge=256, le=1_000_000, description=(
        "address space of the child process that parses files, in MB (Linux, macOS)"))
    ingest_queue: int = Field(default=4, ge=1, le=10_000, description=(
        "writes (ingests, removals) of one collection running or waiting at once in the "
        "HTTP service; one more is refused with 503 and Retry-After"))
    ingest_per_tenant: int = Field(default=2, ge=1, le=10_000, description=(
        "writes of one API key's owner and team running or waiting at once in the HTTP "
        "service, over all collections; one more is refused with 429 and Retry-After"))
    ingest_threads: int = Field(default=2, ge=1, le=256, description=(
        "worker threads ingests run in at once (their own, apart from the threads "
        "searches use); more ingests wait their turn without holding a thread"))
    source_root: str | None = Field(default=None, description=(
        "folder that document sources are named relative to (their identity); default: "
        "the folder holding the data home ($AGENT_SEARCH_HOME/..)"))

    # chunking
    chunk_tokens: int = Field(default=256, ge=32, le=4096)
    chunk_overlap: int = Field(default=32, ge=0, le=1024)

    # retrieval
    mode: SearchMode = "hybrid"
    fusion: FusionMethod = Field(default="calibrated", description=(
        "hybrid fusion: 'calibrated' (absolute 0..1 scores, see kb.retrieval), or the "
        "relative 'zscore', 'dbsf', 'rrf'"))
    score_scale: ScoreScale = Field(default="background", description=(
        "what dense, sparse and calibrated-hybrid scores measure: 'background' = evidence "
        "over the query's similarity to unrelated text, for this embedding model (the "
        "same at any collection size; see docs/kb-scores.md); 'reference' = the earlier "
        "scale fitted on SciFact (kept for comparison)"))
    # chosen on held-out SciFact claims (not the test split); see bench/bench_kb.py
    dense_weight: float = Field(default=0.75, ge=0)
    sparse_weight: float = Field(default=0.25, ge=0)
    rrf_k: int = Field(default=60, ge=1)
    prefetch: int = Field(default=100, ge=1, le=10_000, description="candidates per branch")
    prf_docs: int = Field(default=0, ge=0, le=50, description=(
        "dense pseudo-relevance feedback: move the query vector towards the mean of the "
        "top N results (Rocchio) and search the dense branch again; 0 = off"))
    prf_weight: float = Field(default=0.5, ge=0, le=10)
    feedback_docs: int = Field(default=5, ge=0, le=50, description=(
        "hybrid neighbour feedback: rank again with each candidate's similarity to the "
        "mean of the top N (collections of at least 20 N chunks); 0 = off"))
    # 3 on zh-rgb's tuning half; 2 keeps SciFact test >= 0.74 with MiniLM's second build
    feedback_weight: float = Field(default=2.0, ge=0, le=10)
    # 0.7: kept by four of five leave-one-project-out folds of bench/bench_realdocs.py
    diversity: float = Field(default=0.7, ge=0, le=1, description=(
        "bring each document's best chunk before further chunks of documents already "
        "listed, when it scores at least 1 - diversity of the chunk it passes (0 = the "
        "ranking as it is, 1 = every document's best chunk first; see docs/kb-scores.md)"))
    # 0.5: kept by four of five leave-one-project-out folds of bench/bench_realdocs.py
    heading_weight: float = Field(default=0.5, ge=0, le=5, description=(
        "rank the hybrid's top candidates again with their heading path's similarity to "
        "the question (standard score among them, times this; 0 = off; see "
        "docs/kb-scores.md)"))
    foreign_veto: bool = Field(default=True, description=(
        "weigh each hit's score by the meaning the question keeps without the rare words "
        "the passage lacks (a question about a neighbouring tool gets no confident "
        "answer; collections with statistics only, see docs/kb-scores.md)"))
    judge_url: str | None = Field(default=None, description=(
        "base URL of an OpenAI-compatible chat endpoint that judges which of the top "
        "passages answer the question (with kb.judge_model); unset = no judge"))
    judge_model: str | None = Field(default=None, description="the judge's model name")
    judge_api_key_env: str | None = Field(default=None, description=(
        "env var holding the judge endpoint's key"))
    judge_timeout: float = Field(default=5.0, gt=0, le=120, description=(
        "seconds the judge may take; past it the hits are kept unjudged, with a warning"))
    judge_passages: int = Field(default=3, ge=1, le=10, description=(
        "top passages the judge reads; those below are capped by the ones it keeps"))
    bm25_k1: float = Field(default=1.2, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    language: str = Field(default="english", description="stemmer and stop words of BM25")
    cjk_terms: CJKTerms = Field(default="words", description=(
        "BM25 terms of Chinese text in collections created from now on: 'words' = jieba's "
        "search-mode words (dictionary only), 'bigrams' = overlapping character pairs; a "
        "collection keeps the one it was created with (older ones: bigrams)"))

    # graph
    graph_hops: int = Field(default=1, ge=1, le=2)
    graph_boost: float = Field(default=0.1, ge=0, le=1)

    @field_validator("embedding_model")
    @classmethod
    def _full_model_name(cls, value: str) -> str:
        return OFFLINE_MODELS.get(value.strip().lower(), value)

    @model_validator(mode="after")
    def _check(self) -> KBSettings:
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError("chunk_overlap must be smaller than chunk_tokens")
        if self.embedding_provider == "openai" and not self.embedding_url:
            raise ValueError("embedding_provider 'openai' needs embedding_url")
        if self.store == "qdrant" and not self.url:
            raise ValueError("store 'qdrant' needs url (the server's address, or "
                             "file:///abs/folder for qdrant-client's local mode)")
        return self

    @classmethod
    def from_config(cls, config: SearchConfig) -> KBSettings:
        """Validate ``config.kb``; a bad value raises :class:`ConfigError` naming the key."""
        return config.kb.settings(cls)
