"""engine/corpus/tsne.py against float64 loops written here: P by a per-row bisection, KL(P‖Q)
falling, clusters kept apart, the same coordinates from the same seed."""
from __future__ import annotations

import math

import numpy as np

from engine.corpus.tsne import affinities, kl_divergence, tsne


def reference_affinities(x, perplexity):
    """Row by row: bisection on β until the conditional distribution's perplexity is the target."""
    n = len(x)
    conditional = np.zeros((n, n))
    for i in range(n):
        d = [sum((x[i][c] - x[j][c]) ** 2 for c in range(len(x[i]))) for j in range(n)]
        low, high, beta = 0.0, math.inf, 1.0
        for _ in range(200):
            nearest = min(d[j] for j in range(n) if j != i)
            w = [0.0 if j == i else math.exp(-beta * (d[j] - nearest)) for j in range(n)]
            total = sum(w)
            p = [v / total for v in w]
            entropy = -sum(v * math.log(v) for v in p if v > 0)
            if abs(entropy - math.log(perplexity)) < 1e-10:
                break
            if entropy > math.log(perplexity):
                low = beta
                beta = beta * 2 if math.isinf(high) else (low + high) / 2
            else:
                high = beta
                beta = (low + high) / 2
        conditional[i] = p
    return (conditional + conditional.T) / (2 * n)


def reference_kl(p, y):
    n = len(y)
    kernel = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                kernel[i, j] = 1.0 / (1.0 + (y[i, 0] - y[j, 0]) ** 2 + (y[i, 1] - y[j, 1]) ** 2)
    q = kernel / kernel.sum()
    return sum(p[i, j] * math.log(p[i, j] / q[i, j]) for i in range(n) for j in range(n) if p[i, j] > 0)


def clusters(seed=1, per=20, dims=10):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=20.0, size=(3, dims))
    x = np.concatenate([centre + rng.normal(size=(per, dims)) for centre in centres])
    return x, np.repeat(np.arange(3), per)


def test_affinities_match_a_per_row_bisection():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(25, 4))
    p = affinities(x, perplexity=5.0, tol=1e-12)
    expected = reference_affinities(x.tolist(), 5.0)
    np.testing.assert_allclose(p, expected, rtol=1e-7, atol=1e-15)
    np.testing.assert_allclose(affinities(x, perplexity=5.0), expected, rtol=1e-3)  # the default tolerance
    assert abs(p.sum() - 1.0) < 1e-12 and np.allclose(p, p.T) and np.all(np.diag(p) == 0)


def test_kl_divergence_matches_a_loop_and_falls_under_descent():
    x, _ = clusters(per=10)
    p = affinities(x, perplexity=8.0)
    start = np.random.default_rng(0).normal(scale=1e-4, size=(len(x), 2))  # tsne's own start for seed 0
    y = tsne(x, perplexity=8.0, seed=0)
    assert abs(kl_divergence(p, y) - reference_kl(p, y)) < 1e-9
    assert reference_kl(p, y) < 0.1 * reference_kl(p, start)
    shorter = tsne(x, perplexity=8.0, iterations=300, seed=0)  # fifty steps after the exaggeration ends
    assert reference_kl(p, y) < reference_kl(p, shorter) < reference_kl(p, start)


def test_separated_clusters_stay_together():
    x, label = clusters()
    y = tsne(x, perplexity=10.0, seed=3)
    distance = ((y[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(distance, np.inf)
    assert np.array_equal(label[distance.argmin(axis=1)], label)  # every point's nearest neighbour: its own cluster
    centres = np.stack([y[label == c].mean(axis=0) for c in range(3)])
    spread = max(np.abs(y[label == c] - centres[c]).max() for c in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a in range(3) for b in range(a + 1, 3)]
    assert min(gaps) > 2 * spread


def test_same_seed_same_coordinates_another_seed_others():
    x, _ = clusters(per=8)
    first = tsne(x, perplexity=5.0, iterations=100, seed=7)
    assert np.array_equal(first, tsne(x, perplexity=5.0, iterations=100, seed=7))
    assert not np.allclose(first, tsne(x, perplexity=5.0, iterations=100, seed=8))


def test_few_points_and_a_perplexity_too_large():
    assert tsne(np.ones((3, 5))).shape == (3, 2) and not tsne(np.ones((3, 5))).any()
    x, _ = clusters(per=4)  # 12 points: perplexity 30 is held to 11 / 3
    y = tsne(x, iterations=50)
    assert y.shape == (12, 2) and np.all(np.isfinite(y))
