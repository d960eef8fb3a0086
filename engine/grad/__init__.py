"""Gradients in NumPy: a hand-written backward pass for the decoder and encoder blocks (the
forward's pieces' derivatives in engine.grad.pieces), the scalar targets, saliency and integrated
gradients. Placed between the models and the analyses: it reads a model's block weights, as
engine.models.llama_batch does, and knows no analysis."""
