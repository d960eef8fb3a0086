"""Tests of engine/files/: what an export holds and costs."""
