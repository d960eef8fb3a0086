"""Write tests/fixtures/families/: a tiny random model of each family the app opens as a Hugging
Face folder (bert, xlm-roberta, gpt2, llama, qwen2, qwen3), GGUF files of the four decoders, and
what transformers computes for each, for tests/engine/models/test_families.py.

Needs torch, transformers, tokenizers and gguf (tests do not; CI has no torch):

    /work/refvenv/bin/python scripts/make_family_fixtures.py

Each model is built offline from a transformers config (2 layers, d_model 32, eager attention),
its parameters redrawn with a visible spread (matrices N(0, 0.25²), norms' γ 1 + N(0, 0.1²), biases
N(0, 0.1²)) so that a wrong transpose, a missing bias or a swapped norm changes the numbers well
beyond the tolerances, and saved with ``save_pretrained(safe_serialization=True)``. The float
formats vary on purpose: llama is saved in float16, qwen2 in bfloat16 (the engine upcasts to
float32; the reference is transformers reading the saved folder back in float32), gpt2 in shards
with their index. (The Unigram trainer is not deterministic: a rerun may change xlm-roberta's
vocabulary; the fixtures and references are always written together.)

Tokenizers are trained here in a second with ``tokenizers`` on a few sentences: WordPiece for
bert ([CLS] … [SEP] from its TemplateProcessing), Unigram with Metaspace for xlm-roberta (<s> …
</s> from RobertaProcessing), byte-level BPE for the decoders (llama prepends <s>; gpt2 and the
qwens add nothing), so that the ids come from each tokenizer.json's own post-processor.

References, ``<family>_reference.npz``: ``text``; ``input_ids`` (n,) as tokenizer.json encodes TEXT;
``attentions`` (layers, heads, n, n); ``hidden_states`` (layers + 1, n, d) as transformers returns
them; ``next_token_logits`` (vocab,) at the last position (decoders). The GGUF files
(``<family>.gguf``, float32, written with gguf's GGUFWriter the way llama.cpp's converter names and
lays out the tensors: llama's W_Q, W_K rows permuted for adjacent-pair RoPE, gpt2's fused
attn_qkv) hold the same weights and vocabulary, so the same reference applies to them.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "families"
TEXT = "The cat sat on the mat, then 小猫 slept. 猫在垫子上睡觉。"
CORPUS = [
    "The cat sat on the mat.", "The dog sat on the log.", "A cat and a dog slept on the mat, then woke.",
    "小猫坐在垫子上。", "猫在垫子上睡觉。", "小狗在门口睡觉。", "then the cat slept, then the dog sat.",
    "Attention moves information between tokens.", "The capital of France is Paris.",
] * 4
D, HEADS, LAYERS, D_FF = 32, 4, 2, 64
ENCODERS = ("bert", "xlm-roberta")
DECODERS = ("gpt2", "llama", "qwen2", "qwen3", "mistral", "llama-old", "phi3", "gemma2", "gemma3", "olmo2")
# GGUF architecture of each decoder written as a GGUF file too (llama-old: the older config.json form)
GGUF_ARCH = {"gpt2": "gpt2", "llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "llama-old": "llama",
             "phi3": "phi3", "olmo2": "olmo2", "gemma2": "gemma2", "gemma3": "gemma3"}
# What a Gemma GGUF cannot say, and llama.cpp derives instead: the query scale (1/√head_dim below 27 B) and,
# for Gemma 3, the layer kinds (every sixth global). Their reference is transformers run on the same weights
# with those values: ``<family>-gguf_reference.npz``.
GGUF_IMPLIES = {"gemma2": dict(query_pre_attn_scalar=16),
                "gemma3": dict(query_pre_attn_scalar=16, layer_types=["sliding_attention", "sliding_attention"])}
# Written in transformers' older config.json form: rope_theta at the top level, no num_key_value_heads
OLD_FORM = ("llama-old",)
SEED = 20261201


# ---------------------------------------------------------------- tokenizers


def wordpiece():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tokenizer.token_to_id("[CLS]")), ("[SEP]", tokenizer.token_to_id("[SEP]"))])
    return tokenizer


def unigram():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]  # XLM-R's order: <pad> = 1 = padding_idx
    tokenizer.train_from_iterator(CORPUS, trainers.UnigramTrainer(vocab_size=110, special_tokens=specials,
                                                                  unk_token="<unk>"))
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tokenizer


def byte_bpe(family: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    prepends = family in ("llama", "mistral", "llama-old", "gemma2", "gemma3")  # a <s> / <bos> first
    specials = ["<s>", "</s>"] if prepends else ["<|endoftext|>"]
    tokenizer.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if prepends:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", tokenizer.token_to_id("<s>"))])
    elif family == "gpt2":
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer


# ---------------------------------------------------------------- models


def config_of(family: str, vocab: int):
    from transformers import (BertConfig, Gemma2Config, Gemma3TextConfig, GPT2Config, LlamaConfig, MistralConfig,
                              Olmo2Config, Phi3Config, Qwen2Config, Qwen3Config, XLMRobertaConfig)

    common = dict(vocab_size=vocab, attn_implementation="eager")
    if family == "bert":
        return BertConfig(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=D_FF,
                          max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu", **common)
    if family == "xlm-roberta":
        return XLMRobertaConfig(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                intermediate_size=D_FF, max_position_embeddings=66, type_vocab_size=1,
                                pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5, **common)
    if family == "gpt2":
        return GPT2Config(n_embd=D, n_layer=LAYERS, n_head=HEADS, n_inner=D_FF, n_positions=64,
                          activation_function="gelu_new", bos_token_id=vocab - 1, eos_token_id=vocab - 1, **common)
    if family == "llama":  # grouped-query attention, separate output head, Llama 3's θ and frequency scaling
        # (original context 16: the first frequency is blended, the others divided by 8, within the text's 26 tokens)
        return LlamaConfig(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                           intermediate_size=D_FF, max_position_embeddings=64, rms_norm_eps=1e-5,
                           rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                            "original_max_position_embeddings": 16},
                           tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, **common)
    if family == "qwen2":  # Q, K, V biases, tied head
        return Qwen2Config(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                           intermediate_size=D_FF, max_position_embeddings=64, rms_norm_eps=1e-6,
                           rope_theta=1000000.0, tie_word_embeddings=True, use_sliding_window=False, **common)
    if family == "qwen3":  # q/k RMSNorm per head, head_dim 16 ≠ d/heads, separate head
        return Qwen3Config(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=2,
                           head_dim=16, intermediate_size=D_FF, max_position_embeddings=64, rms_norm_eps=1e-6,
                           rope_theta=1000000.0, tie_word_embeddings=False, use_sliding_window=False, **common)
    sizes = dict(hidden_size=D, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=D_FF,
                 max_position_embeddings=64, **common)
    if family == "mistral":  # a sliding window of 5 positions, shorter than the text; GQA
        return MistralConfig(num_key_value_heads=2, sliding_window=5, rms_norm_eps=1e-5, rope_theta=1000000.0,
                             tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, **sizes)
    if family == "llama-old":  # every head its own k and v (config.json rewritten in the old form)
        return LlamaConfig(num_key_value_heads=HEADS, rms_norm_eps=1e-5, rope_theta=20000.0,
                           tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, **sizes)
    if family == "phi3":  # fused qkv_proj with grouped-query attention, fused gate_up_proj
        return Phi3Config(num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False,
                          sliding_window=None, pad_token_id=0, bos_token_id=0, eos_token_id=0, **sizes)
    if family == "gemma2":  # soft-capping small enough to change scores and logits; sliding window on layer 0
        return Gemma2Config(num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=24, sliding_window=4,
                            attn_logit_softcapping=2.0, final_logit_softcapping=3.0, rms_norm_eps=1e-6,
                            hidden_activation="gelu_pytorch_tanh", bos_token_id=0, eos_token_id=1, pad_token_id=1,
                            **sizes)
    if family == "gemma3":  # q/k norm, local (θ 10⁴, window 4) then global (θ 10⁶) layers
        return Gemma3TextConfig(num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16, sliding_window=4,
                                layer_types=["sliding_attention", "full_attention"], rms_norm_eps=1e-6,
                                rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                                 "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}},
                                bos_token_id=0, eos_token_id=1, pad_token_id=1, **sizes)
    if family == "olmo2":  # norms after attention and MLP instead of before; q/k norm over all heads
        return Olmo2Config(num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=500000.0, tie_word_embeddings=False,
                           pad_token_id=1, bos_token_id=0, eos_token_id=1, **sizes)
    raise ValueError(family)


def old_form(folder: Path) -> None:
    """Rewrite config.json as transformers 4 wrote it: rope_theta at the top, no num_key_value_heads."""
    path = folder / "config.json"
    config = json.loads(path.read_text())
    parameters = config.pop("rope_parameters", None) or {}
    config["rope_theta"] = parameters.get("rope_theta", 10000.0)
    config.pop("num_key_value_heads", None)
    config.pop("layer_types", None)
    path.write_text(json.dumps(config, indent=2) + "\n")


def build(family: str, vocab: int, seed: int):
    import torch
    from transformers import AutoModel, AutoModelForCausalLM

    torch.manual_seed(seed)
    config = config_of(family, vocab)
    cls = AutoModel if family in ENCODERS else AutoModelForCausalLM
    model = cls.from_config(config, attn_implementation="eager")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            normlike = any(part in name for part in ("norm", "LayerNorm", "ln_"))
            if normlike and name.endswith("weight"):  # Gemma stores w and applies (1 + w)
                parameter.copy_((0.0 if family.startswith("gemma") else 1.0) + 0.1 * torch.randn_like(parameter))
            elif name.endswith("bias"):
                parameter.copy_(0.1 * torch.randn_like(parameter))
            else:
                parameter.copy_(0.25 * torch.randn_like(parameter))
    return model.eval()


def reference(model, ids: list[int], decoder: bool) -> dict:
    import torch

    with torch.no_grad():
        result = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True,
                       **({"use_cache": False} if decoder else {}))
    out = {
        "input_ids": np.asarray(ids, np.int64),
        "attentions": torch.stack(result.attentions)[:, 0].float().numpy(),
        "hidden_states": torch.stack(result.hidden_states)[:, 0].float().numpy(),
    }
    if decoder:
        out["next_token_logits"] = result.logits[0, -1].float().numpy()
    return out


def feature_effect(folder: Path, ids: list[int]) -> float:
    """Largest change of the last logits when the sliding window and soft-capping are switched off."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(folder)
    plain = AutoConfig.from_pretrained(folder)
    plain.sliding_window = 64  # as long as the positions: no window
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        if hasattr(plain, key):
            setattr(plain, key, None)
    with torch.no_grad():
        a = AutoModelForCausalLM.from_pretrained(folder, config=config, dtype=torch.float32,
                                                 attn_implementation="eager")(torch.tensor([ids])).logits[0, -1]
        b = AutoModelForCausalLM.from_pretrained(folder, config=plain, dtype=torch.float32,
                                                 attn_implementation="eager")(torch.tensor([ids])).logits[0, -1]
    return float((a - b).abs().max())


# ---------------------------------------------------------------- GGUF


def _permute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp convert_hf_to_gguf.py's LlamaModel.permute (rows → adjacent-pair RoPE order)."""
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def llama3_factors(rope: dict, head_dim: int) -> np.ndarray:
    """llama.cpp convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors: one divisor a frequency."""
    import math

    base, factor = rope["rope_theta"], rope["factor"]
    low, high, context = rope["low_freq_factor"], rope["high_freq_factor"], rope["original_max_position_embeddings"]
    freqs = 1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < context / high:
            factors.append(1)
        elif wavelen > context / low:
            factors.append(factor)
        else:
            smooth = (context / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def write_gguf(path: Path, family: str, model, tokenizer) -> None:
    import gguf

    state = {name: value.float().numpy() for name, value in model.state_dict().items()}
    config = model.config
    arch = GGUF_ARCH[family]
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(f"tiny-{family}")
    writer.add_block_count(LAYERS)
    writer.add_context_length(64)
    writer.add_embedding_length(D)
    writer.add_feed_forward_length(D_FF)
    writer.add_head_count(HEADS)
    vocab = tokenizer.get_vocab()
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    specials = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
    merges = [" ".join(pair) if isinstance(pair, (list, tuple)) else pair
              for pair in json.loads(tokenizer.to_str())["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if token in specials else 1 for token in tokens])
    writer.add_token_merges(merges)
    tensors: dict[str, np.ndarray] = {}
    if family == "gpt2":
        writer.add_layer_norm_eps(config.layer_norm_epsilon)
        tensors["token_embd.weight"] = state["transformer.wte.weight"]
        tensors["position_embd.weight"] = state["transformer.wpe.weight"]
        tensors["output_norm.weight"] = state["transformer.ln_f.weight"]
        tensors["output_norm.bias"] = state["transformer.ln_f.bias"]
        for i in range(LAYERS):
            p, b = f"transformer.h.{i}.", f"blk.{i}."
            for hf, ours in (("ln_1", "attn_norm"), ("ln_2", "ffn_norm")):
                tensors[b + ours + ".weight"] = state[p + hf + ".weight"]
                tensors[b + ours + ".bias"] = state[p + hf + ".bias"]
            # GPT-2's Conv1D weights are (in, out); GGUF (numpy view) holds (out, in) as llama.cpp's converter
            for hf, ours in (("attn.c_attn", "attn_qkv"), ("attn.c_proj", "attn_output"), ("mlp.c_fc", "ffn_up"),
                             ("mlp.c_proj", "ffn_down")):
                tensors[b + ours + ".weight"] = state[p + hf + ".weight"].T
                tensors[b + ours + ".bias"] = state[p + hf + ".bias"]
    else:
        heads, kv = config.num_attention_heads, config.num_key_value_heads
        head_dim = getattr(config, "head_dim", None) or D // heads
        writer.add_head_count_kv(kv)
        rope = getattr(config, "rope_parameters", None) or {}
        rope = rope.get("full_attention", rope)  # Gemma 3: one table per layer kind; the file holds the global θ
        writer.add_rope_freq_base(float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0))))
        writer.add_layer_norm_rms_eps(config.rms_norm_eps)
        if head_dim != D // heads:
            writer.add_key_length(head_dim)
            writer.add_value_length(head_dim)
        if arch == "phi3":
            writer.add_rope_dimension_count(head_dim)
        if arch in ("gemma2", "gemma3"):  # llama.cpp's converter: the window, the caps; norms stored as 1 + γ
            writer.add_sliding_window(config.sliding_window)
            if config.attn_logit_softcapping:
                writer.add_attn_logit_softcapping(config.attn_logit_softcapping)
            if config.final_logit_softcapping:
                writer.add_final_logit_softcapping(config.final_logit_softcapping)
            for name in [name for name in state if name.endswith("norm.weight")]:
                state[name] = state[name] + 1.0
        if "<s>" in tokenizer.get_vocab():
            writer.add_bos_token_id(tokenizer.token_to_id("<s>"))
            writer.add_add_bos_token(True)
        tensors["token_embd.weight"] = state["model.embed_tokens.weight"]
        tensors["output_norm.weight"] = state["model.norm.weight"]
        if not config.tie_word_embeddings:
            tensors["output.weight"] = state["lm_head.weight"]
        if rope.get("rope_type") == "llama3":  # llama.cpp's converter: the divisors of θ_i as rope_freqs.weight
            tensors["rope_freqs.weight"] = llama3_factors(rope, head_dim)
        for i in range(LAYERS):
            p, b = f"model.layers.{i}.", f"blk.{i}."
            names = {"attn_output.weight": state[p + "self_attn.o_proj.weight"],
                     "ffn_down.weight": state[p + "mlp.down_proj.weight"]}
            if arch == "phi3":  # llama.cpp keeps Phi-3's fusions: attn_qkv [Q; K; V] and ffn_up [gate; up]
                names["attn_qkv.weight"] = state[p + "self_attn.qkv_proj.weight"]
                names["ffn_up.weight"] = state[p + "mlp.gate_up_proj.weight"]
            else:
                q, k = state[p + "self_attn.q_proj.weight"], state[p + "self_attn.k_proj.weight"]
                if arch == "llama":
                    q, k = _permute(q, heads), _permute(k, kv)
                names.update({"attn_q.weight": q, "attn_k.weight": k,
                              "attn_v.weight": state[p + "self_attn.v_proj.weight"],
                              "ffn_gate.weight": state[p + "mlp.gate_proj.weight"],
                              "ffn_up.weight": state[p + "mlp.up_proj.weight"]})
            if arch == "olmo2":  # norms after attention and MLP only
                names["post_attention_norm.weight"] = state[p + "post_attention_layernorm.weight"]
                names["post_ffw_norm.weight"] = state[p + "post_feedforward_layernorm.weight"]
            elif arch in ("gemma2", "gemma3"):  # norms before and after both
                names["attn_norm.weight"] = state[p + "input_layernorm.weight"]
                names["post_attention_norm.weight"] = state[p + "post_attention_layernorm.weight"]
                names["ffn_norm.weight"] = state[p + "pre_feedforward_layernorm.weight"]
                names["post_ffw_norm.weight"] = state[p + "post_feedforward_layernorm.weight"]
            else:
                names["attn_norm.weight"] = state[p + "input_layernorm.weight"]
                names["ffn_norm.weight"] = state[p + "post_attention_layernorm.weight"]
            for proj, short in (("q_proj", "attn_q"), ("k_proj", "attn_k"), ("v_proj", "attn_v")):
                if p + f"self_attn.{proj}.bias" in state:
                    names[short + ".bias"] = state[p + f"self_attn.{proj}.bias"]
            if arch in ("qwen3", "olmo2", "gemma3"):
                names["attn_q_norm.weight"] = state[p + "self_attn.q_norm.weight"]
                names["attn_k_norm.weight"] = state[p + "self_attn.k_norm.weight"]
            for name, value in names.items():
                tensors[b + name] = value
    for name, value in tensors.items():
        writer.add_tensor(name, np.ascontiguousarray(value, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# ---------------------------------------------------------------- main


def make(family: str, seed: int) -> None:
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, PreTrainedTokenizerFast

    tokenizer = wordpiece() if family == "bert" else unigram() if family == "xlm-roberta" else byte_bpe(family)
    vocab = tokenizer.get_vocab_size()
    if family in ("qwen2", "qwen3"):
        vocab += 12  # Qwen pads its embedding past the tokenizer's vocabulary: the engine must allow it
    model = build(family, vocab, seed)
    folder = OUT / family
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    dtype = {"llama": torch.float16, "qwen2": torch.bfloat16}.get(family)
    if dtype is not None:  # stored rounded (Module.to works in place)
        model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="60KB" if family == "gpt2" else "1GB")
    if family in OLD_FORM:
        old_form(folder)
    # The reference is what transformers computes for the saved folder, read back in float32 (a model
    # converted in memory would keep, e.g., RoPE frequencies rounded to bfloat16).
    cls = AutoModel if family in ENCODERS else AutoModelForCausalLM
    model = cls.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    config = json.loads((folder / "config.json").read_text())
    config["attn_implementation"] = "eager"
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "generation_config.json").unlink(missing_ok=True)
    ids = tokenizer.encode(TEXT).ids
    # the same ids through transformers' fast tokenizer built on the file: what a user's code would get
    fast = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    assert fast(TEXT)["input_ids"] == ids, (family, fast(TEXT)["input_ids"], ids)
    arrays = reference(model, ids, family in DECODERS)
    arrays["text"] = np.array(TEXT)
    if family in ("mistral", "gemma2"):  # the feature must change the result, or the test proves nothing
        print(f"  {family}: without its window / soft-capping the logits move by {feature_effect(folder, ids):.3f}")
    np.savez_compressed(OUT / f"{family}_reference.npz", **arrays)
    if family in GGUF_IMPLIES:
        from transformers import AutoConfig

        implied = AutoConfig.from_pretrained(folder)
        for key, value in GGUF_IMPLIES[family].items():
            setattr(implied, key, value)
        gguf_model = AutoModelForCausalLM.from_pretrained(folder, config=implied, dtype=torch.float32,
                                                          attn_implementation="eager").eval()
        implied_arrays = reference(gguf_model, ids, True)
        implied_arrays["text"] = np.array(TEXT)
        np.savez_compressed(OUT / f"{family}-gguf_reference.npz", **implied_arrays)
    if family in GGUF_ARCH:
        write_gguf(OUT / f"{family}.gguf", family, model, tokenizer)
    sizes = sum(f.stat().st_size for f in folder.iterdir())
    print(f"{family}: {len(ids)} tokens {ids}, vocab {vocab}, folder {sizes / 1e3:.0f} kB, "
          f"{sorted(f.name for f in folder.iterdir())}")


def main() -> None:
    import torch

    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    families = sys.argv[1:] or list(ENCODERS + DECODERS)
    for index, family in enumerate(ENCODERS + DECODERS):
        if family in families:
            make(family, SEED + index)


if __name__ == "__main__":
    main()
