"""Tests of app/panels/: one dock's panel at a time."""
