# The four programs of bench/programs.lua in NumPy, written naturally (new
# arrays each step); prints "<program>: <seconds>" for the timed part of each,
# the same part examples/*.lua time. Run by bench/programs.lua.
import sys
import time

import numpy as np


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def logistic_regression(n, d, iterations, rate=0.5):
    rng = np.random.default_rng(30)
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal((d, 1)) > 0).astype(np.float64)

    def run():
        w = np.zeros((d, 1))
        for _ in range(iterations):
            p = 1 / (1 + np.exp(-(X @ w)))
            w = w - (rate / n) * (X.T @ (p - y))
    return timed(run)


def blur(h, w):
    image = np.random.default_rng(30).random((h, w), dtype=np.float32)

    def run():
        padded = np.pad(image, 2, mode="edge")
        total = np.zeros((h, w), np.float32)
        for dy in range(5):
            for dx in range(5):
                total = total + padded[dy:dy + h, dx:dx + w]
        return total / 25
    return timed(run)


def monte_carlo_pi(samples, chunk):
    rng = np.random.default_rng(30)

    def run():
        inside, done = 0, 0
        while done < samples:
            m = min(chunk, samples - done)
            x, y = rng.random(m), rng.random(m)
            inside += int((x * x + y * y <= 1).sum())
            done += m
        return 4 * inside / samples
    return timed(run)


def kmeans(n, k, iterations, dims=2):
    rng = np.random.default_rng(30)
    where = rng.uniform(-10, 10, (k, dims))
    points = where[rng.integers(0, k, n)] + rng.standard_normal((n, dims))

    def run():
        centres = points[:k].copy()
        for _ in range(iterations):
            diff = points[:, None, :] - centres[None, :, :]
            labels = (diff * diff).sum(axis=2).argmin(axis=1)
            count = np.bincount(labels, minlength=k)
            centres = np.stack([np.bincount(labels, weights=points[:, j], minlength=k) / count
                                for j in range(dims)], axis=1)
    return timed(run)


if __name__ == "__main__":
    program, sizes = sys.argv[1], [int(float(s)) for s in sys.argv[2:]]
    print("%s: %.6f" % (program, globals()[program](*sizes)))
