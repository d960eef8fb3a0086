"""Tests of figures/: pictures and step-through exports, read back by their pixels and frames."""
