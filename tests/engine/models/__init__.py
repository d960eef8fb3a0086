"""Tests of engine/models/: the real models, model files and folders, families, the registry."""
