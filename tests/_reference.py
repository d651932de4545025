"""Slow, obviously-right numpy versions of the kernels, to compare the compiled code against."""
import numpy as np


def softmax_rows(M):
    M = M - M.max(axis=1, keepdims=True)
    E = np.exp(M)
    return E / E.sum(axis=1, keepdims=True)


def logistic_loss_grad(X, codes, sw, W, b, reference):
    """sum_i sw_i * (-log P(code_i | x_i)) and its gradient in W (K, d) and b (K).
    reference: class code 0 has margin 0 and output k stands for code k + 1."""
    M = X @ W.T + b
    full = np.concatenate([np.zeros((len(X), 1)), M], axis=1) if reference else M
    P = softmax_rows(full)
    n = len(X)
    loss = -np.sum(sw * np.log(P[np.arange(n), codes]))
    T = np.zeros_like(P)
    T[np.arange(n), codes] = 1.0
    R = (P - T) * sw[:, None]
    if reference:
        R = R[:, 1:]
    return loss, R.T @ X, R.sum(axis=0)


def sgd_epoch_log(X, codes, W, b, order, eta_of_t, alpha, reference, batch_size=1,
                  average=False, losses=None):
    """Plain SGD on the log-loss, row by row in `order` (no tricks): returns W, b (and the
    average of the iterates after each step when `average`). `losses`, a list, receives each
    batch's loss at the weights before its step."""
    W, b = W.copy(), b.copy()
    sums_W, sums_b, steps, t = np.zeros_like(W), np.zeros_like(b), 0, 0
    for first in range(0, len(order), batch_size):
        rows = order[first:first + batch_size]
        t += 1
        eta = eta_of_t(t)
        loss, gW, gb = logistic_loss_grad(X[rows], codes[rows], np.ones(len(rows)), W, b,
                                          reference)
        if losses is not None:
            losses.append(loss)
        W = (1 - eta * alpha) * W - eta * gW / len(rows)
        b = b - eta * gb / len(rows)
        sums_W += W
        sums_b += b
        steps += 1
    if average:
        return sums_W / steps, sums_b / steps
    return W, b


def adagrad_epoch_log(X, codes, W, b, order, eta0, alpha, reference, eps=1e-8, losses=None):
    """AdaGrad on the log-loss, one row at a time, L2 inside each weight's gradient (`losses`
    as in sgd_epoch_log)."""
    W, b = W.copy(), b.copy()
    G, Gb = np.zeros_like(W), np.zeros_like(b)
    for i in order:
        loss, gW, gb = logistic_loss_grad(X[i:i + 1], codes[i:i + 1], np.ones(1), W, b,
                                          reference)
        if losses is not None:
            losses.append(loss)
        gW = gW + alpha * W
        nz = gW != 0
        G[nz] += gW[nz] ** 2
        W[nz] -= eta0 * gW[nz] / (np.sqrt(G[nz]) + eps)
        nzb = gb != 0
        Gb[nzb] += gb[nzb] ** 2
        b[nzb] -= eta0 * gb[nzb] / (np.sqrt(Gb[nzb]) + eps)
    return W, b


def non_finite_problems(rng, n_trials, max_rows, dtype):
    """Classification problems with one NaN / +inf / -inf cell each, for the fits whose first
    pass over X is the finiteness check: yields (trial, X, y, sample_weight, message), X of
    3..max_rows rows and 1..8 columns at a random scale, K = 2 or 3 classes, the bad cell in a
    random place, its row's weight 0 on odd trials, and the error's expected message."""
    for trial in range(n_trials):
        n, d, K = int(rng.integers(3, max_rows)), int(rng.integers(1, 9)), int(rng.integers(2, 4))
        X = (rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
        i, j = rng.integers(n), rng.integers(d)
        bad = (np.nan, np.inf, -np.inf)[trial % 3]
        X[i, j] = bad
        sw = rng.random(n) + 0.1
        sw[i] = 0.0 if trial % 2 else sw[i]
        yield (trial, X, np.arange(n) % K, sw,
               "X contains NaN" if np.isnan(bad) else "X contains infinity")


def logistic_hessian_blocks(X, codes, sw, W, b, reference):
    """The blocks sum_i c_i,kl [x_i, 1][x_i, 1]^T of the summed log-loss's Hessian for the pairs
    of outputs (k, l <= k), pair k (k + 1) / 2 + l: c_kl = sw p_k ([k == l] - p_l)."""
    M = X @ W.T + b
    full = np.concatenate([np.zeros((len(X), 1)), M], axis=1) if reference else M
    P = softmax_rows(full)[:, 1:] if reference else softmax_rows(full)
    Xt = np.column_stack([X, np.ones(len(X))])
    K = W.shape[0]
    blocks = []
    for k in range(K):
        for l in range(k + 1):
            c = sw * P[:, k] * ((k == l) - P[:, l])
            blocks.append(Xt.T @ (c[:, None] * Xt))
    return np.array(blocks)
