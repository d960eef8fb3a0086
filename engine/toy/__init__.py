"""The configurable teaching engine: the user's settings, random weights, static embeddings, labs."""
