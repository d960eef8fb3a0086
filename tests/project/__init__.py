"""Tests across the tree: import rules, packaging, the run scripts, the documents' paths."""
