"""Tests of engine/analysis/: every analysis against an independent calculation."""
