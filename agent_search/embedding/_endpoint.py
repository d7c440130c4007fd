"""An OpenAI-compatible ``/embeddings`` endpoint as an embedder: the second provider,
chosen per collection (``kb.embedding_provider: openai``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from agent_search.embedding._local import EmbeddingError, Vectors

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, Ollama, vLLM,
    llama.cpp server...). The API key, if any, comes from ``OPENAI_API_KEY``."""

    def __init__(self, base_url: str, model: str, *, dimensions: int | None = None,
                 batch_size: int = 64, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model_id = f"openai:{model}"
        self._model = model
        self.batch_size = batch_size
        self._timeout = timeout
        self.dimensions = dimensions or 0

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        import httpx  # here: the local models (every other embedder) never need it

        rows: list[list[float]] = []
        headers = {}
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        with httpx.Client(timeout=self._timeout, headers=headers) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start:start + self.batch_size])
                try:
                    resp = client.post(f"{self.base_url}/embeddings",
                                       json={"model": self._model, "input": batch})
                    resp.raise_for_status()
                    data = sorted(resp.json()["data"], key=lambda d: d["index"])
                    rows.extend([list(map(float, d["embedding"])) for d in data])
                except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
                    raise EmbeddingError(
                        f"embedding endpoint {self.base_url} failed: {exc}"
                    ) from exc
        arr = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if self.dimensions and arr.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"embedding endpoint returned {arr.shape[1]}-d vectors, expected {self.dimensions}"
            )
        self.dimensions = int(arr.shape[1])
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        unit: Vectors = arr / np.maximum(norms, 1e-12)
        return unit
