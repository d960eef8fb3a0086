"""Tests of cli/: the command line's files and its refusals."""
