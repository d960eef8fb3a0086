"""Switched-off heads together with a user's hook on the same hook_z: the ablation is a hook like
any other, registered before the user's (engine/core/hooks.py), so the user's hook sees the
switched-off heads already zero, and what it writes stands.

The oracle is the same model run with both edits as user hooks in that order, and without them
(nothing shared with the ablation's own hook); on the toy engine and a tiny llama GGUF.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine import AttentionConfig
from engine.models.toy import ToyModel
from tests.tiny_gguf import write_tiny_gguf

OFF = (0, 1)  # (layer, head) switched off
WRITTEN = 0.5  # what the user's hook writes into that head


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from engine.models.smollm2 import load_gguf

    toy = ToyModel(AttentionConfig(text="the cat sat on the mat", d_model=16, heads=4, seed=3))
    path = tmp_path_factory.mktemp("order") / "tiny-llama.gguf"
    write_tiny_gguf(path, "llama", seed=5)
    return {"toy": (toy, "the cat sat on the mat"), "llama": (load_gguf(path), " the cat sat on the mat")}


@pytest.mark.parametrize("kind", ["toy", "llama"])
def test_the_users_hook_sees_the_ablation_and_its_write_stands(models, kind):
    model, text = models[kind]
    layer, head = OFF
    name = f"blocks.{layer}.attn.hook_z"
    seen = []

    def record_then_write(z, hook_name):  # z: (n, heads, d_head)
        seen.append(z.copy())
        z = z.copy()
        z[:, head] = WRITTEN
        return z

    def zero(z, hook_name):
        z = z.copy()
        z[:, head] = 0.0
        return z

    def write(z, hook_name):
        z = z.copy()
        z[:, head] = WRITTEN
        return z

    both = model.run_with_hooks(text, [(name, record_then_write)], ablate=frozenset({OFF}))
    by_hand = model.run_with_hooks(text, [(name, zero), (name, write)])
    plain = model.run_with_hooks(text, [])
    ablated = model.run(text, ablate=frozenset({OFF}))

    assert len(seen) == 1 and np.all(seen[0][:, head] == 0.0), "the user's hook ran before the ablation"
    assert np.abs(seen[0][:, :head]).max() > 0 and np.abs(seen[0][:, head + 1:]).max() > 0
    np.testing.assert_array_equal(both.hidden_states, by_hand.hidden_states)
    # the write stands: the result is neither the plain run nor the ablated one
    scale = np.abs(plain.hidden_states[-1]).max()
    assert np.abs(both.hidden_states[-1] - ablated.hidden_states[-1]).max() > 1e-3 * scale
    assert np.abs(both.hidden_states[-1] - plain.hidden_states[-1]).max() > 1e-3 * scale
