"""Tests of engine/text/: tokenizers, segmentation, words."""
