"""Chinese word segmentation with jieba, started in milliseconds instead of seconds.

jieba keeps its dictionary as a Python dict of ~500,000 words and prefixes, unmarshalled
from a cache at first use: measured here 0.8–1.5 s, all of it holding the GIL (so the window
would freeze too). jieba's segmenter only asks that dict three things — is this fragment a
word or a word's prefix, and what is a word's frequency — which a sorted NumPy array answers
with a binary search. The sorted list is built once from jieba's own dictionary file and kept in a
cache folder as .npy files that load memory-mapped.

The segmentation is jieba's own (its DAG, dynamic programme and HMM for unknown words):
only the dictionary's container changes, and a test checks the tokens are identical.
"""
from __future__ import annotations

import hashlib
import time
from bisect import bisect_left
import logging
import os
import tempfile
from pathlib import Path

import numpy as np


class SortedFrequencies:
    """The read-only mapping jieba.Tokenizer.FREQ expects, over a sorted list of words.

    ``fragment in freq`` is true for a word and for any prefix of a word; ``freq[fragment]`` is
    the word's count, 0 for a prefix that is not a word (exactly jieba's prefix dict). A lookup
    is one binary search (measured: as fast as jieba's dict for whole sentences).
    """

    def __init__(self, words: list[str], counts: list[int]) -> None:
        self.words = words  # sorted
        self.counts = counts

    def _find(self, fragment: str) -> tuple[bool, int]:
        index = bisect_left(self.words, fragment)
        if index < len(self.words):
            word = self.words[index]
            if word == fragment:
                return True, self.counts[index]
            if word.startswith(fragment):
                return True, 0
        return False, 0

    def __contains__(self, fragment) -> bool:
        return isinstance(fragment, str) and bool(fragment) and self._find(fragment)[0]

    def __getitem__(self, fragment: str) -> int:
        found, count = self._find(fragment)
        if not found:
            raise KeyError(fragment)
        return count

    def get(self, fragment: str, default=None):
        found, count = self._find(fragment) if fragment else (False, 0)
        return count if found else default

    def __len__(self) -> int:
        return len(self.words)


def _split_lines(text: str, pieces: int = 32) -> list[str]:
    """text.split("\n") in pieces, so no single call holds the GIL for long (≈ 5 ms each)."""
    words: list[str] = []
    start, step = 0, max(1, len(text) // pieces)
    while start < len(text):
        end = text.find("\n", start + step)
        end = len(text) if end < 0 else end
        words.extend(text[start:end].split("\n"))
        start = end + 1
        time.sleep(0)  # let the GUI thread run between pieces
    return words


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "attention-explorer"


def _dictionary_arrays(dictionary: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Sorted words as one UTF-8 blob ("\n"-joined) and their counts, from jieba's dict.txt."""
    counts: dict[str, int] = {}
    for line in dictionary.decode("utf-8").splitlines():
        parts = line.strip().split(" ")
        if len(parts) >= 2 and parts[0]:
            counts[parts[0]] = int(parts[1])  # a later line wins, as in jieba.gen_pfdict
    words = sorted(counts)
    blob = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
    return blob, np.array([counts[w] for w in words], dtype=np.int64)


def load_frequencies(jieba) -> tuple[SortedFrequencies, int]:
    """(frequencies, total) for jieba's default dictionary, from the cache or built now."""
    with jieba.get_dict_file() as handle:
        dictionary = handle.read()
    key = hashlib.blake2b(dictionary, digest_size=8).hexdigest()
    folder = cache_folder()
    words_path, counts_path = folder / f"jieba-{key}-words.npy", folder / f"jieba-{key}-counts.npy"
    try:
        blob, counts = np.load(words_path), np.load(counts_path)
    except (OSError, ValueError):
        blob, counts = _dictionary_arrays(dictionary)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for path, array in ((words_path, blob), (counts_path, counts)):
                handle, temporary = tempfile.mkstemp(dir=folder, suffix=".npy")
                with os.fdopen(handle, "wb") as stream:
                    np.save(stream, array)
                os.replace(temporary, path)
        except OSError:
            pass  # no writable cache: still works, just builds again next time
    words = _split_lines(blob.tobytes().decode("utf-8"))
    count_list = counts.tolist()
    if len(words) != len(count_list):
        raise ValueError("the cached jieba dictionary is inconsistent")
    return SortedFrequencies(words, count_list), int(counts.sum())


def import_jieba():
    """jieba, imported without pkg_resources: jieba imports it only to open its own dictionary file
    (falling back to a plain open() by path without it), and importing pkg_resources took 0.56 s of
    the window's 1.6 s start-up here (python -X importtime). Any later ``import pkg_resources`` works."""
    import sys

    if "jieba" in sys.modules or "pkg_resources" in sys.modules:
        import jieba

        return jieba
    sys.modules["pkg_resources"] = None  # an import of it raises ImportError
    try:
        import jieba
    finally:
        del sys.modules["pkg_resources"]
    return jieba


def fast_tokenizer():
    """A jieba.Tokenizer whose dictionary is the sorted word list."""
    jieba = import_jieba()
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.FREQ, tokenizer.total = load_frequencies(jieba)
    tokenizer.initialized = True
    return tokenizer
