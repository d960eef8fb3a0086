"""Tests of app/: the controller, the worker, sessions, translations."""
