"""Tests of engine/core/: attention, positions, hooks, threads."""
