"""Tests of app/jobs/: the Qt-free work the worker's lanes run."""
