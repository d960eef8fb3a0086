"""Analyses of a trace: rollout, value norms, head statistics, ablation, meaning, explanations."""
