"""Gradients of a scalar target with respect to a model's input and its hook points: one forward
that keeps its activations, one backward (engine.grad.decoder, engine.grad.encoder).

    inputs = input_of(model, model.tokenize("The capital of France is"))   # (n, d) blocks.0.hook_resid_pre
    result = gradients(model, inputs[None], Target("log_prob", token=answer_id))
    result.values[0], result.grad_input[0]               # log p(answer), (n, d)
    result.points["blocks.3.attn.hook_z"][0]             # (n, heads, d_head)

The models it follows: every decoder of engine.models.llama (Llama, Qwen2/3, GPT-2, Mistral, Phi-3,
Gemma 2/3, OLMo 2: engine.grad.decoder follows their block features), the BERT-shaped encoders
(MiniLM, e5, BERT folders), and the toy engine (engine.grad.toy: no vocabulary, so an encoder's
cosine target; its points are its own, hook_q … hook_attn_out, no hook_mlp_out).
The activations are checked against the memory budget before anything runs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..core.hooks import check_ablation
from ..core.memory import DEFAULT_MEMORY_BUDGET, format_bytes
from . import decoder as decoder_backward
from . import encoder as encoder_backward
from . import toy as toy_backward
from .targets import Target, evaluate

POINTS = ("hook_resid_pre", "hook_attn_out", "hook_mlp_out", "attn.hook_z", "attn.hook_pattern")


@dataclass(frozen=True, eq=False)
class Gradients:
    """What one forward and backward gave, for a batch of B inputs."""

    values: np.ndarray  # (B,) float64 the target's value for each input
    inputs: np.ndarray  # (B, n, d) float32 blocks.0.hook_resid_pre
    grad_input: np.ndarray  # (B, n, d) float32 ∂target/∂input
    points: dict  # "blocks.{l}.{point}" → (B, …) the gradient at that hook point (empty unless asked)


def _backend(model):
    """(module, weights, config) of the model's block, or EngineError where gradients do not apply."""
    facts = model.facts  # declared by the model (engine/models/contract.py)
    if not facts.capabilities.gradients:
        raise EngineError("gradients are taken for the toy engine, BERT-shaped encoders and Llama-family decoders "
                          "(GPT-2, Qwen, Gemma, OLMo …); {family} is none of them", field="model", family=facts.family)
    if facts.capabilities.next_token_logits:  # every block shape engine.models.llama runs (engine.grad.decoder follows it)
        decoder_backward.check_supported(model.config)
        return decoder_backward, model.weights, model.config
    if facts.capabilities.configurable:  # the toy engine: its W_Q … W_O follow its settings
        return toy_backward, toy_backward.weights_of(model.config), model.config
    return encoder_backward, model.weights, model.config  # the BERT-shaped encoders


def check_supported(model) -> None:
    """EngineError, before anything runs, when gradients do not apply to ``model``."""
    _backend(model)


def input_of(model, tokenized) -> np.ndarray:
    """(n, d) float32 blocks.0.hook_resid_pre of a tokenized text: the input gradients are of."""
    module, weights, config = _backend(model)
    if module is encoder_backward:
        return module.embed(weights, config, tokenized.input_ids, tokenized.token_type_ids)
    if module is toy_backward:  # the toy embeds a token by its text
        return module.embed(weights, config, tokenized)
    return module.embed(weights, config, tokenized.input_ids)


def saved_bytes(model, batch: int, n: int) -> int:
    """Bytes a forward of ``batch`` inputs of ``n`` tokens keeps for its backward."""
    module, _, config = _backend(model)
    return module.saved_bytes(config, batch, n)


def check_budget(model, batch: int, n: int, memory_budget: int) -> None:
    need = saved_bytes(model, batch, n)
    if need > memory_budget:
        raise EngineError("the gradient of {n} tokens × {batch} inputs keeps about {need} of activations, over the "
                          "{budget} memory budget: shorten the text or take fewer steps", field="text", n=n,
                          batch=batch, need=format_bytes(need), budget=format_bytes(memory_budget))


def output_head(model) -> np.ndarray | None:
    """(vocab, d) the decoder's output head (None for an encoder)."""
    return None if model.W_U is None else model.W_U.T


def logit_softcap(model) -> float:
    """The cap of the output head's logits where the family caps them (Gemma 2), else 0."""
    return decoder_backward.final_softcap(model.config) if model.facts.capabilities.next_token_logits else 0.0


def forward_output(model, inputs: np.ndarray, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
                   record: list | None = None) -> tuple[np.ndarray, object]:
    """(output (B, n, d), saved activations) of the block stack on ``inputs`` (B, n, d); ``record``:
    a list that gets each layer's values at its hook points."""
    module, weights, config = _backend(model)
    inputs = np.asarray(inputs, np.float32)
    if inputs.ndim != 3 or inputs.shape[2] != model.facts.d_model:
        raise EngineError("inputs must be (batch, tokens, {d}); got {shape}", field="text", d=model.facts.d_model,
                          shape=tuple(inputs.shape))
    ablate = check_ablation(ablate, model.facts.layers, model.facts.heads)
    check_budget(model, inputs.shape[0], inputs.shape[1], memory_budget)
    return module.forward(weights, config, inputs, ablate, record)


def backward(model, saved, grad_output: np.ndarray, points: bool = True):
    """(∂/∂input (B, n, d), per layer {point: gradient}) from a :func:`forward_output`'s ``saved`` and
    the gradient of its output: several targets' backwards from one forward."""
    module, weights, config = _backend(model)
    return module.backward(weights, config, saved, grad_output, points=points)


def gradients(model, inputs: np.ndarray, target: Target, *, ablate=frozenset(), points: bool = True,
              memory_budget: int = DEFAULT_MEMORY_BUDGET) -> Gradients:
    """The gradient of ``target`` with respect to ``inputs`` (B, n, d) and, with ``points``, at every
    hook point of POINTS in every layer. ``ablate``: (layer, head) pairs switched off (their hook_z
    is zero before W_O: no gradient flows through them). EngineError for a model gradients do not
    follow, a batch over the memory budget, or a gradient that is not finite (naming where)."""
    module, weights, config = _backend(model)
    inputs = np.asarray(inputs, np.float32)
    output, saved = forward_output(model, inputs, ablate=ablate, memory_budget=memory_budget)
    if not np.isfinite(output).all():
        raise EngineError("the forward pass gave a value that is not a number (a weight or the input is NaN or "
                          "infinite): no gradient", field="model")
    values, grad_output = evaluate(target, output, output_head(model), logit_softcap(model))
    grad_input, by_layer = module.backward(weights, config, saved, grad_output, points=points)
    if not points:
        if not np.isfinite(grad_input).all():
            raise EngineError("the gradient became NaN or infinite: a weight is damaged", field="model")
        return Gradients(values, inputs, grad_input, {})
    names = {}
    for layer in range(len(by_layer) - 1, -1, -1):  # the order the backward went: the first non-finite is where
        for point in by_layer[layer]:  # POINTS (the toy: its own points)
            grad = by_layer[layer][point]
            if not np.isfinite(grad).all():
                raise EngineError("the gradient became NaN or infinite at blocks.{layer}.{point}: a weight there "
                                  "is damaged", field="model", layer=layer, point=point)
            names[f"blocks.{layer}.{point}"] = grad
    return Gradients(values, inputs, grad_input, names)
