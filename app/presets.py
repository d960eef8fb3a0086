"""The tutorials' examples, one menu entry each (title, settings).

Titles are translated when read (QCoreApplication.translate, context "Presets"): iterating or
indexing PRESETS gives them in the interface language; Qt is imported only then.
"""
from __future__ import annotations

from engine import AttentionConfig


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


class _Presets(tuple):
    """(title, settings) pairs whose titles come out translated."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        title, settings = super().__getitem__(index)
        return _translated(title), settings

    def __iter__(self):
        return (self[index] for index in range(len(self)))


def _translated(title: str) -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("Presets", title)


PRESETS: tuple[tuple[str, dict], ...] = _Presets((
    (
        QT_TRANSLATE_NOOP("Presets", "小明 喜欢 苹果 — the hand calculation (2-d, identity weights, no scaling)"),
        dict(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=2, heads=1, positional="none", scale=False,
             weights="identity", embeddings={"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}),
    ),
    (
        QT_TRANSLATE_NOOP("Presets", "小明 喜欢 苹果 — 4-d embeddings of the tutorial “Self-Attention 本质”"),
        dict(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=4, heads=1, positional="none", scale=True,
             weights="identity", embeddings={"小明": [1, 0, 1, 0], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 1]}),
    ),
    ("I ate the cake and it was delicious.", dict(text="I ate the cake and it was delicious.", d_model=64, heads=4)),
    ("我 喜欢 深度学习", dict(text="我 喜欢 深度学习", d_model=64, heads=4)),
    ("小明把苹果给了小红，她很高兴。", dict(text="小明把苹果给了小红，她很高兴。", d_model=64, heads=4)),
    ("苹果很好吃", dict(text="苹果很好吃", d_model=64, heads=4)),
    ("苹果发布了新手机", dict(text="苹果发布了新手机", d_model=64, heads=4)),
    (QT_TRANSLATE_NOOP("Presets", "我 爱 北 京 — causal mask (decoder)"),
     dict(text="我 爱 北 京", tokenizer="whitespace", d_model=64, heads=4, mask="causal")),
    (QT_TRANSLATE_NOOP("Presets", "512 dimensions, 8 heads of 64 (tutorial “自注意力机制 self-attention”)"),
     dict(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=512, heads=8)),
))


def preset_config(index: int) -> AttentionConfig:
    return AttentionConfig(**tuple.__getitem__(PRESETS, index)[1])
