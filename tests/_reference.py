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
                  average=False):
    """Plain SGD on the log-loss, row by row in `order` (no tricks): returns W, b (and the
    average of the iterates after each step when `average`)."""
    W, b = W.copy(), b.copy()
    sums_W, sums_b, steps, t = np.zeros_like(W), np.zeros_like(b), 0, 0
    for first in range(0, len(order), batch_size):
        rows = order[first:first + batch_size]
        t += 1
        eta = eta_of_t(t)
        _, gW, gb = logistic_loss_grad(X[rows], codes[rows], np.ones(len(rows)), W, b,
                                       reference)
        W = (1 - eta * alpha) * W - eta * gW / len(rows)
        b = b - eta * gb / len(rows)
        sums_W += W
        sums_b += b
        steps += 1
    if average:
        return sums_W / steps, sums_b / steps
    return W, b


def adagrad_epoch_log(X, codes, W, b, order, eta0, alpha, reference, eps=1e-8):
    """AdaGrad on the log-loss, one row at a time, L2 inside each weight's gradient."""
    W, b = W.copy(), b.copy()
    G, Gb = np.zeros_like(W), np.zeros_like(b)
    for i in order:
        _, gW, gb = logistic_loss_grad(X[i:i + 1], codes[i:i + 1], np.ones(1), W, b, reference)
        gW = gW + alpha * W
        nz = gW != 0
        G[nz] += gW[nz] ** 2
        W[nz] -= eta0 * gW[nz] / (np.sqrt(G[nz]) + eps)
        nzb = gb != 0
        Gb[nzb] += gb[nzb] ** 2
        b[nzb] -= eta0 * gb[nzb] / (np.sqrt(Gb[nzb]) + eps)
    return W, b
