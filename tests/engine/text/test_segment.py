"""The fast jieba dictionary gives exactly jieba's own segmentation."""
from __future__ import annotations

import logging
import random

import jieba
import pytest

from tests import ROOT
from engine.text import segment


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(cache))
    fast_built = segment.fast_tokenizer()  # builds the cache
    fast_cached = segment.fast_tokenizer()  # reads it back
    patch.undo()
    jieba.setLogLevel(logging.WARNING)
    reference = jieba.Tokenizer()
    reference.initialize()
    assert list((cache / "attention-explorer").glob("jieba-*-words.npy"))
    return reference, fast_built, fast_cached


SENTENCES = [
    "小明喜欢苹果", "小明把苹果给了小红，她很高兴。", "苹果很好吃", "苹果发布了新手机", "我喜欢深度学习",
    "猫追老鼠", "老鼠追猫", "北京大学生前来应聘", "结过婚的和尚未结过婚的", "他说的确实在理", "南京市长江大桥",
    "Self-Attention 就是让模型具备这种回头看并建立联系的能力", "每个侦探都要分析4个嫌疑人",
]


@pytest.mark.slow
def test_same_tokens_as_jieba(tokenizers):
    reference, fast_built, fast_cached = tokenizers
    rng = random.Random(7)
    alphabet = [ch for sentence in SENTENCES for ch in sentence]
    texts = SENTENCES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    for text in texts:
        expected = list(reference.tokenize(text))
        assert list(fast_built.tokenize(text)) == expected, text
        assert list(fast_cached.tokenize(text)) == expected, text


def test_prefix_semantics(tokenizers):
    _, fast, _ = tokenizers
    freq = fast.FREQ
    assert "苹果" in freq and freq["苹果"] > 0
    assert "苹" in freq  # a prefix of a word is "in" the dictionary, as in jieba's prefix dict
    assert freq.get("") is None and "" not in freq
    assert freq.get("不存在的词组合乱七八糟") is None
    with pytest.raises(KeyError):
        freq["不存在的词组合乱七八糟"]


@pytest.mark.slow
def test_jieba_starts_without_pkg_resources():
    """The window's first sentence is Chinese: importing pkg_resources for jieba cost 0.56 s of a
    1.6 s start-up. In a fresh process the segmenter works and pkg_resources stays unimported."""
    import subprocess
    import sys

    code = ("import sys; from engine.text.segment import fast_tokenizer; "
            "print(' '.join(fast_tokenizer().cut('小明喜欢苹果')), 'pkg_resources' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["小明", "喜欢", "苹果", "False"], done.stderr
