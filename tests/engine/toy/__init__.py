"""Tests of engine/toy/ and the tutorial's seeds it reproduces."""
