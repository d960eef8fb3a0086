"""Text: tokenizers, word segmentation, the word view, byte-level BPE."""
