"""Tests of engine/: pure NumPy, no window."""
