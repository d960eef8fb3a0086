"""The seeds' examples, one menu entry each: settings, the token to focus, the head and stage to
show, and a caption that says which paragraph it is, what to look at and, where the tutorial
rounds or errs, the exact value (docs/SEEDS.md walks every item of the three tutorials).

Titles and captions are translated when read (QCoreApplication.translate, contexts "Presets" and
"PresetCaption"): iterating or indexing PRESETS gives (title, settings) pairs in the interface
language, :func:`preset` the whole :class:`Preset`; Qt is imported only then.

Two kinds:
- ``PRESETS`` (model "toy"): the engine's own computation, every number reproducible; the
  tests (tests/engine/toy/test_seeds.py) check each caption's figures against the engine.
- ``MODEL_PRESETS`` (ENGLISH_MODEL / MULTILINGUAL_MODEL of engine.models): a sentence for a real model, the query and
  key words of the relation; the layer, head and weight in the caption are found by
  :func:`engine.analysis.meaning.strongest_head` when the preset opens, never typed in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine import AttentionConfig, EngineError
from engine.models import DECODER_MODEL, DEFAULT_MODEL, ENGLISH_MODEL, MULTILINGUAL_MODEL

PRESET_DIR = Path(__file__).resolve().parent.parent / "resources" / "presets"
STAGES = ("scores", "scaled", "weights")  # the controller's stages (app/controller.py)


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


@dataclass(frozen=True)
class Preset:
    """One menu entry. ``settings``: AttentionConfig fields (toy) or {"text": …} (real models).

    ``focus``: the token text to focus (the query row), None = keep the first token.
    ``head``: 0-based head to show (toy); for real models the head comes from the finding.
    ``stage``: "scores", "scaled" or "weights". ``caption``: English; for real models with Qt-style
    %1 … %5 (query, key, layer, head, weight) filled by :meth:`caption_for`. ``source``: the seed and paragraph it reproduces.
    ``model``: a registry name (engine.models). ``key``: for real models the key word of the
    relation (query = ``focus``).
    """

    title: str
    settings: dict
    caption: str
    source: str
    focus: str | None = None
    head: int = 0
    stage: str = "weights"
    model: str = DEFAULT_MODEL
    key: str | None = None
    projections_file: str | None = field(default=None)  # a file in resources/presets/ → settings["projections"]
    by_words: bool = False  # real models: find the relation between words (小红, not 小 | 红) and show words
    compare: tuple[str, str, str] | None = None  # (word in A, sentence B, word in B) for "Across languages"
    evidence: tuple = ()  # real models: what else the caption reports (app/preset_evidence.py: column, rival, pair …)

    def __post_init__(self) -> None:
        if self.projections_file and "projections" not in self.settings:  # read once, at import
            from engine.toy.weights_file import load_projections

            self.settings["projections"] = load_projections(PRESET_DIR / self.projections_file)

    def config(self) -> AttentionConfig:
        """The preset's AttentionConfig (toy presets only)."""
        if self.model != DEFAULT_MODEL:
            raise EngineError("preset {title!r} runs a real model, not the toy engine", field=None, title=self.title)
        return AttentionConfig(**self.settings)

    def focus_index(self, token_texts) -> int:
        """Position of the focus token in ``token_texts`` (0 when none is set or it is absent)."""
        if self.focus is None:
            return 0
        texts = list(token_texts)
        return texts.index(self.focus) if self.focus in texts else 0

    def caption_values(self, trace) -> tuple:
        """For a real-model preset: (query, key, layer, head, weight) found in ``trace`` by
        :func:`engine.analysis.meaning.strongest_head`; layer and head counted from 0, as the layers panel and
        head grid label them; the weight with 2 decimals."""
        from engine.analysis.meaning import strongest_head

        finding = strongest_head(trace, self.focus, self.key)
        return finding.query, finding.key, finding.layer, finding.head, f"{finding.weight:.2f}"

    def caption_for(self, trace) -> str:
        """The caption (as stored: translate it first for the interface) with the trace's finding filled in."""
        from .text import fill

        return fill(self.caption, *self.caption_values(trace))


class _Presets(tuple):
    """Presets read as (title, settings) pairs whose titles come out translated."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        item = super().__getitem__(index)
        return _translated("Presets", item.title), item.settings

    def __iter__(self):
        return (self[index] for index in range(len(self)))


def _translated(context: str, text: str) -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate(context, text)


_XIAOMING = "小明 喜欢 苹果"
_SEED000_4D = {"小明": [1, 0, 1, 0], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 1]}
_CAKE = "I ate the cake and it was delicious."
# Seed 001's sentence as 4-d vectors (embedding + position already added, as the tutorial's
# red box): made up to reproduce its printed scores with the matrices in the projections file.
_CAKE_4D = {
    "I": [0.9, 0.1, 0.0, 0.2], "ate": [0.2, 0.8, 0.3, 0.1], "the": [0.1, 0.1, 0.1, 0.1],
    "cake": [0.3, 0.2, 1.0, 0.6], "and": [0.0, 0.2, 0.1, 0.0], "it": [0.6, 0.1, 0.5, 0.7],
    "was": [0.1, 0.3, 0.2, 0.0], "delicious": [0.4, 0.2, 0.7, 0.5], ".": [0.0, 0.0, 0.0, 0.1],
}

TOY = (
    Preset(
        QT_TRANSLATE_NOOP("Presets", "小明 喜欢 苹果 — the hand calculation (2-d, identity weights, no scaling)"),
        dict(text=_XIAOMING, tokenizer="whitespace", d_model=2, heads=1, positional="none", scale=False,
             weights="identity", embeddings={"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”, “手算一遍 QKV”: 喜欢's row. Scores [0, 1, 1]; softmax 0.155 / 0.422 / 0.422 "
                          "(the tutorial rounds to 0.16 / 0.42 / 0.42; 苹果 and 喜欢 tie); new 喜欢 = "
                          "[0.578, 0.845] (tutorial: [0.58, 0.84], from its rounded weights)."),
        "seed 000, 手算一遍 QKV", focus="喜欢", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "小明 喜欢 苹果 — 4-d embeddings of “Self-Attention 本质”"),
        dict(text=_XIAOMING, tokenizer="whitespace", d_model=4, heads=1, positional="none", scale=True,
             weights="identity", embeddings=_SEED000_4D),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”, “Embedding 后”: its 4-d vectors with W_Q = W_K = W_V = I. 喜欢's scores are "
                          "1 / 2 / 1: with these vectors 喜欢 matches itself most (0.274 / 0.452 / 0.274 after ÷√4 "
                          "and softmax), unlike frame 5's “喜欢：低”."),
        "seed 000, Embedding 后 (4-d vectors)", focus="喜欢", stage="scores",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Scores 8 / 5 / 7 → softmax (“Self-Attention 本质”)"),
        dict(text=_XIAOMING, tokenizer="whitespace", d_model=2, heads=1, positional="none", scale=False,
             weights="identity", embeddings={"小明": [2, 3], "喜欢": [1, 2], "苹果": [1, 3]}),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”, “Softmax 登场”: 喜欢's scores 8 / 5 / 7 (2-d vectors chosen to give them, "
                          "no ÷√d_k). softmax([8, 5, 7]) = [0.705, 0.035, 0.259], not the tutorial's "
                          "[0.7, 0.1, 0.2]: 喜欢 gets 3.5 %, not 10 %."),
        "seed 000, Softmax 登场 / 计算相关性", focus="喜欢", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Frames 5–7: 0.45 / 0.10 / 0.45 (“Self-Attention 本质”)"),
        dict(text=_XIAOMING, tokenizer="whitespace", d_model=4, heads=1, positional="none", scale=True,
             weights="identity", embeddings=_SEED000_4D,
             projections={"w_q": [[0, 0, 0, 0], [1.5, 0, 0, 0], [1.5, 0, 0, 0], [0, 0, 0, 0]],
                          "w_k": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
                          "w_v": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”, frames 5–7: the tutorial's 4-d vectors, W_K = W_V = I and a W_Q that makes "
                          "喜欢's query [3, 0, 0, 0]. Scores 3 / 0 / 3 (high, low, high), ÷√4, softmax "
                          "0.450 / 0.100 / 0.450; new 喜欢 = [0.900, 0.550, 0.550, 0.450]."),
        "seed 000, 第五帧–第七帧", focus="喜欢", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "I ate the cake — “缩放点积注意力的四个阶段”: scores 1.3 / 0.4 / 1.6 (custom W_Q, W_K, W_V)"),
        dict(text=_CAKE, tokenizer="auto", d_model=4, heads=1, positional="none", scale=True, weights="identity",
             embeddings=_CAKE_4D),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段”, steps 1–4: 4-d vectors and 4 × 4 W_Q, W_K, W_V (resources/presets/"
                          "seed001_cake_projections.json) made to reproduce its figures, which are not in the "
                          "text. cake·it = 1.30, cake·I = 0.40, cake·cake = 1.60; ÷√4 = 2; the new cake "
                          "vector starts with 2.40 — not a probability, and other entries are negative. Step 4's "
                          "“first element of V” is V's first column: new cake[0] = Σ_j weight_j · V[j, 0]."),
        "seed 001, 步骤 1–4", focus="cake", stage="scores", projections_file="seed001_cake_projections.json",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴ (“自注意力机制”)"),
        dict(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=2, heads=1, positional="none", scale=True,
             weights="identity", embeddings={"我": [1, 0], "喜欢": [-2.95, 1], "深度": [1, 1], "学习": [2, 1]}),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”, “最后得到的b是啥”: 我's scores 1 / −2.95 / 1 / 2, ÷√2, softmax "
                          "0.245 / 0.015 / 0.245 / 0.496, so b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴. "
                          "The tutorial's four weights add up to 1.001: they are rounded."),
        "seed 004, Multi-Head 第二步骤 (b₁)", focus="我", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "The team meeting: similarities 0.3 / 0.8 / 0.5 (“自注意力机制”)"),
        dict(text="成员A 成员B 成员C 成员D", tokenizer="whitespace", d_model=2, heads=1, positional="none",
             scale=False, weights="identity",
             embeddings={"成员A": [0, 1], "成员B": [0.3, 1], "成员C": [0.8, 1], "成员D": [0.5, 1]},
             projections={"w_q": [[0, 0], [1, 0]], "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]]}),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”, “开小组会”: A's scores with B, C, D are 0.3 / 0.8 / 0.5 (and 0 with itself: "
                          "self-attention includes A). Softmax: 0.161 / 0.217 / 0.358 / 0.265 — C gets the most, "
                          "but such close scores give a flat mix, not “重点参考C”."),
        "seed 004, self 的理解 (开小组会)", focus="成员A", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "我 喜欢 深度学习 — three tokens (“自注意力机制”)"),
        dict(text="我 喜欢 深度学习", tokenizer="whitespace", d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”, “具体举个例子走一遍”: three tokens, random untrained weights (the tutorial's "
                          "figures are not in its text). Look at 喜欢's row: how much it takes from 深度学习 "
                          "depends on the Seed setting (random weights), not on meaning."),
        "seed 004, 具体举个例子走一遍", focus="喜欢", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "I ate the cake and it was delicious. — random toy weights"),
        dict(text=_CAKE, d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段”'s sentence with random, untrained toy weights: whatever “it” attends to here "
                          "is chance. A trained model (MiniLM) shows it → cake."),
        "seed 001, 例句", focus="it", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "I ate the cake — 8 heads of d_v = 4, concatenated to 32 (“缩放点积注意力的四个阶段”)"),
        dict(text=_CAKE, d_model=32, heads=8),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段”, “多头注意力”: 8 heads, each output 4-d (d_v = 4); side by side each word's "
                          "vector is 4 × 8 = 32-d. The heads' weights are random: they are not trained "
                          "specialists."),
        "seed 001, 多头注意力 (4 × 8 = 32)", focus="it", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "我 喜欢 深度学习 (jieba)"),
        dict(text="我 喜欢 深度学习", d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "The automatic tokenizer (jieba) splits this text into 4 tokens; the three-token preset "
                          "above keeps the tutorial's three by splitting at spaces."),
        "seed 004, tokenization", focus="喜欢", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "小明把苹果给了小红，她很高兴。"),
        dict(text="小明把苹果给了小红，她很高兴。", d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”'s question “她指的是谁”, with random toy weights: 她's row here is chance. "
                          "Answering it needs a trained multilingual model."),
        "seed 004, Self-Attention 解决什么", focus="她", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "苹果很好吃"),
        dict(text="苹果很好吃", d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”: 苹果 in “苹果很好吃” (compare with “苹果发布了新手机”). With random toy weights "
                          "the two 苹果 vectors differ only because their neighbours differ: fruit against "
                          "company needs a trained model."),
        "seed 000, Self-Attention 本质", focus="苹果", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "苹果发布了新手机"),
        dict(text="苹果发布了新手机", d_model=64, heads=4),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”: 苹果 in “苹果发布了新手机” (compare with “苹果很好吃”). With random toy weights "
                          "the two 苹果 vectors differ only because their neighbours differ: fruit against "
                          "company needs a trained model."),
        "seed 000, Self-Attention 本质", focus="苹果", stage="weights",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "我 爱 北 京 — causal mask (decoder)"),
        dict(text="我 爱 北 京", tokenizer="whitespace", d_model=64, heads=4, mask="causal"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”, “Mask 到底是什么”: the tutorial says “predicting 北, the model may not see "
                          "京” — but row 北 is the one that predicts 京 (the next token): it sees 我 爱 北 and not 京. "
                          "Masked scores are −∞ and their weights exactly 0 (the tutorial's “≈0”); the visible "
                          "weights are non-negative and add up to 1."),
        "seed 000, Mask", focus="北", stage="scaled",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "512 dimensions, 8 heads of 64 (“自注意力机制”)"),
        dict(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=512, heads=8),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”, “8个侦探分工”: 512 = 8 × 64. The tutorial's head 2 (head 1 here) reads columns 65–128 of q, k, v "
                          "(counted from 1 as in the tutorial; 64–127 counted from 0). Not “the first 64 features” of "
                          "the word: each of a head's 64 columns is a projection of all 512 features (Q = X·W_Q). "
                          "Random weights: no head is a fingerprint or DNA specialist."),
        "seed 004, Multi-Head Attention", focus="我", head=1, stage="weights",
    ),
)

MODEL_PRESETS: tuple[Preset, ...] = (
    Preset(
        QT_TRANSLATE_NOOP("Presets", "MiniLM: “it” → “cake”"),
        dict(text=_CAKE),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段” says “%1” looks at “%2”. In MiniLM the largest weight %1 → %2 is "
                          "in layer %3, head %4: %5."),
        "seed 001, 例句 / 多头注意力 (代词指代)", focus="it", model=ENGLISH_MODEL, key="cake",
        evidence=(("column",),),
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "MiniLM: “delicious” → “cake”"),
        dict(text=_CAKE),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段”: “delicious” describes the cake. In MiniLM the largest weight "
                          "%1 → %2 is in layer %3, head %4: %5."),
        "seed 001, 多头注意力 (情感线索)", focus="delicious", model=ENGLISH_MODEL, key="cake",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "MiniLM: “ate” → “cake”"),
        dict(text=_CAKE),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“缩放点积注意力的四个阶段”: verb and object. In MiniLM the largest weight %1 → %2 is in "
                          "layer %3, head %4: %5."),
        "seed 001, 多头注意力 (动宾关系)", focus="ate", model=ENGLISH_MODEL, key="cake",
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "MiniLM: “it” → “animal”"),
        dict(text="The animal didn't cross the street because it was too tired."),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "Does attention resolve the pronoun? The largest weight %1 → %2 is in layer %3, head %4: %5."),
        "seed 000, Head4看：代词指代", focus="it", model=ENGLISH_MODEL, key="animal",
        evidence=(("rival", "street"), ("column",),
                  ("pair", "The animal didn't cross the street because it was too tired.",
                   "The animal didn't cross the street because it was too wide.", "it")),
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "SmolLM2: “it” → “animal”, a minimal pair"),
        dict(text="The animal didn't cross the street because it was too tired. It was the"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "A decoder reads the pronoun: its largest weight %1 → %2 is in layer %3, head %4: %5."),
        "seed 000, Head4看：代词指代", focus="it", model=DECODER_MODEL, key="animal",
        evidence=(("rival", "street"),
                  ("pair", "The animal didn't cross the street because it was too tired. It was the",
                   "The animal didn't cross the street because it was too wide. It was the", None, " animal",
                   " street")),
    ),
    # multilingual-e5-small (engine/models/e5.py): the seeds' Chinese sentences in a real model, by words
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Multilingual: 她 → 小红"),
        dict(text="小明把苹果给了小红，她很高兴。"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制”: “她” 指的是谁? One head alone does not answer it. In the multilingual model "
                          "the largest weight %1 → %2 is in layer %3, head %4: %5."),
        "seed 004, Self-Attention 解决什么", focus="她", model=MULTILINGUAL_MODEL, key="小红", by_words=True,
        evidence=(("rival", "小明"), ("column",),
                  ("pair", "小明把苹果给了小刚，他饿了。", "小明把苹果给了小刚，他饱了。", "他")),
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Multilingual: 小明喜欢苹果 by words"),
        dict(text="小明喜欢苹果"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”: 小明 喜欢 苹果 in a real model that reads Chinese, by words (its pieces are "
                          "▁小 明 喜欢 苹果). The verb's largest weight %1 → %2 is in layer %3, head %4: %5. Look at that head's other "
                          "rows: a head that always looks one word ahead shows position, not meaning."),
        "seed 000, 小明 喜欢 苹果", focus="喜欢", model=MULTILINGUAL_MODEL, key="苹果", by_words=True,
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Multilingual: 苹果很好吃 vs 苹果发布了新手机"),
        dict(text="苹果很好吃"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“Self-Attention 本质”: the same 苹果, fruit or company. “Across languages” shows how far apart the two "
                          "苹果 vectors drift layer by layer. Here %1 → %2 is strongest in layer %3, head %4: %5."),
        "seed 000, 苹果很好吃 和 苹果发布了新手机", focus="苹果", model=MULTILINGUAL_MODEL, key="很好吃", by_words=True,
        compare=("苹果", "苹果发布了新手机", "苹果"),
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Multilingual: 苹果 and apple"),
        dict(text="苹果很好吃"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "苹果 and apple in one model: “Across languages” shows the cosine of the two words' vectors "
                          "layer by layer. Here %1 → %2 is strongest in layer %3, head %4: %5."),
        "seed 000, 苹果很好吃", focus="苹果", model=MULTILINGUAL_MODEL, key="很好吃", by_words=True,
        compare=("苹果", "Apples are delicious.", "apple"),
    ),
    Preset(
        QT_TRANSLATE_NOOP("Presets", "Multilingual: 猫追老鼠"),
        dict(text="猫追老鼠"),
        QT_TRANSLATE_NOOP("PresetCaption",
                          "“自注意力机制 self-attention”: without positions 猫追老鼠 and 老鼠追猫 are the same bag of words. "
                          "The verb's largest weight %1 → %2 is in layer %3, head %4: %5."),
        "seed 004, 位置编码 (猫追老鼠)", focus="追", model=MULTILINGUAL_MODEL, key="老鼠", by_words=True,
        evidence=(("next_word",),),
    ),
)

PRESETS: tuple[tuple[str, dict], ...] = _Presets(TOY)


def preset(index: int) -> Preset:
    """Toy preset ``index`` with its title and caption in the interface language."""
    item = TOY[index]
    from dataclasses import replace

    return replace(item, title=_translated("Presets", item.title), caption=_translated("PresetCaption", item.caption))


def preset_config(index: int) -> AttentionConfig:
    return TOY[index].config()


def menu_presets() -> tuple[Preset, ...]:
    """What the window's Presets menu offers, in order: the toy presets (same indices as PRESETS),
    then the real-model presets whose model is in the registry (engine.models)."""
    from engine.models import MODELS

    return (*TOY, *(item for item in MODEL_PRESETS if item.model in MODELS))


def translated(item: Preset) -> Preset:
    """``item`` with its title and caption in the interface language."""
    from dataclasses import replace

    return replace(item, title=_translated("Presets", item.title), caption=_translated("PresetCaption", item.caption))
