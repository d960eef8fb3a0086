"""Tests of the window on each real model (MiniLM, e5, SmolLM2, GGUF files)."""
