"""The seeds' examples, one menu entry each (title, settings)."""
from __future__ import annotations

from engine import AttentionConfig

PRESETS: tuple[tuple[str, dict], ...] = (
    (
        "小明 喜欢 苹果 — the hand calculation (2-d, identity weights, no scaling)",
        dict(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=2, heads=1, positional="none", scale=False,
             weights="identity", embeddings={"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}),
    ),
    (
        "小明 喜欢 苹果 — 4-d embeddings of seed 000",
        dict(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=4, heads=1, positional="none", scale=True,
             weights="identity", embeddings={"小明": [1, 0, 1, 0], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 1]}),
    ),
    ("I ate the cake and it was delicious.", dict(text="I ate the cake and it was delicious.", d_model=64, heads=4)),
    ("我 喜欢 深度学习", dict(text="我 喜欢 深度学习", d_model=64, heads=4)),
    ("小明把苹果给了小红，她很高兴。", dict(text="小明把苹果给了小红，她很高兴。", d_model=64, heads=4)),
    ("苹果很好吃", dict(text="苹果很好吃", d_model=64, heads=4)),
    ("苹果发布了新手机", dict(text="苹果发布了新手机", d_model=64, heads=4)),
    ("我 爱 北 京 — causal mask (decoder)", dict(text="我 爱 北 京", tokenizer="whitespace", d_model=64, heads=4, mask="causal")),
    ("512 dimensions, 8 heads of 64 (seed 004)", dict(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=512, heads=8)),
)


def preset_config(index: int) -> AttentionConfig:
    return AttentionConfig(**PRESETS[index][1])
