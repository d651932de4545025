# The voted perceptron's training (Freund & Schapire 1999; lecture 003's reading "Voting"):
# the perceptron's pass over the rows, which also keeps every weight vector it passes through
# with its survival count, and, with a budget, merges them so at most `budget` stay per output.
#
# What it computes, per row x (dense or CSR) of signed targets t_k and weight s:
# - the margins z_k = t_k (w_k . x + b_k) of each one-vs-rest output k;
# - the row is s visits in a row (floor(s) of weight 1, then one of the fraction left); a visit
#   with z_k <= 0 is a mistake of output k: the live vector (w_k, b_k) is finished with its
#   count, and the new one w_k + u t_k x (b_k + u t_k) starts with count u (the visit's weight).
#   Mistakes are a prefix of the visits: each adds u q to z_k, q = ||x||^2 (+ 1 for the
#   intercept), so output k errs on min(ceil(s), floor(-z / q) + 1) visits (every one when
#   q = 0: then x adds nothing and they are merged into one). The correct visits add their
#   weight to the live vector's count. Weight 1 is the lecture's update; weight 0 skips the row.
# - finished vectors go to the store: rows of V (with intercepts Vb, counts Vc, outputs out),
#   output k's vectors being its rows in store order.
# - budget > 0: when an output holds more than `budget` finished vectors, the two adjacent ones
#   with the smallest summed count are merged into their count-weighted mean (the averaged
#   perceptron of that stretch of the pass), with the summed count: the oldest pair wins a tie.
#   A heap per output of the adjacent pairs (lazily invalidated: a merge changes its nodes'
#   versions) finds that pair in O(log budget). Over a long pass the stretches grow toward equal
#   counts; budget = 1 is the averaged perceptron's vector, no budget Freund & Schapire's vote.
from libc.math cimport ceil, floor
from libc.string cimport memcpy
from cython cimport floating

from .._core._blas cimport fm_dot

cdef enum:
    NO_NODE = -1

# A row that would add more vectors than this (a huge weight on a row whose margin needs many
# visits to turn positive) is refused: that many copies of it would be the same.
cdef double MAX_ROW_VECTORS = 1e7


cdef struct Budget:
    # the store as linked lists, one per output, and a heap of adjacent pairs per output
    Py_ssize_t *prev
    Py_ssize_t *next
    long long *version
    long long *seq
    Py_ssize_t *head
    Py_ssize_t *tail
    Py_ssize_t *length
    Py_ssize_t *free_slots
    Py_ssize_t n_free
    long long next_seq
    # heap entries of output k live at [k * H, k * H + heap_size[k])
    double *h_key
    long long *h_seq
    Py_ssize_t *h_left
    Py_ssize_t *h_right
    long long *h_vl
    long long *h_vr
    Py_ssize_t *heap_size
    Py_ssize_t H


cdef inline bint entry_less(Budget *g, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return g.h_key[a] < g.h_key[b] or (g.h_key[a] == g.h_key[b] and g.h_seq[a] < g.h_seq[b])


cdef inline void entry_swap(Budget *g, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    g.h_key[a], g.h_key[b] = g.h_key[b], g.h_key[a]
    g.h_seq[a], g.h_seq[b] = g.h_seq[b], g.h_seq[a]
    g.h_left[a], g.h_left[b] = g.h_left[b], g.h_left[a]
    g.h_right[a], g.h_right[b] = g.h_right[b], g.h_right[a]
    g.h_vl[a], g.h_vl[b] = g.h_vl[b], g.h_vl[a]
    g.h_vr[a], g.h_vr[b] = g.h_vr[b], g.h_vr[a]


cdef void heap_push(Budget *g, Py_ssize_t k, Py_ssize_t left, const double *Vc) noexcept nogil:
    """Push the pair (left, next[left]) of output k (nothing when left has no right)."""
    cdef Py_ssize_t right = g.next[left], base = k * g.H, i, parent
    if right == NO_NODE:
        return
    if g.heap_size[k] == g.H:       # only stale entries can fill it: start again from the list
        heap_rebuild(g, k, Vc)
        return
    i = base + g.heap_size[k]
    g.heap_size[k] += 1
    g.h_key[i] = Vc[left] + Vc[right]
    g.h_seq[i] = g.seq[left]
    g.h_left[i], g.h_right[i] = left, right
    g.h_vl[i], g.h_vr[i] = g.version[left], g.version[right]
    while i > base:
        parent = base + (i - base - 1) // 2
        if not entry_less(g, i, parent):
            break
        entry_swap(g, i, parent)
        i = parent


cdef void heap_pop(Budget *g, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t base = k * g.H, n, i, child, smallest
    g.heap_size[k] -= 1
    n = g.heap_size[k]
    if n == 0:
        return
    entry_swap(g, base, base + n)
    i = 0
    while True:
        smallest, child = i, 2 * i + 1
        if child < n and entry_less(g, base + child, base + smallest):
            smallest = child
        if child + 1 < n and entry_less(g, base + child + 1, base + smallest):
            smallest = child + 1
        if smallest == i:
            return
        entry_swap(g, base + i, base + smallest)
        i = smallest


cdef void heap_rebuild(Budget *g, Py_ssize_t k, const double *Vc) noexcept nogil:
    cdef Py_ssize_t node = g.head[k]
    g.heap_size[k] = 0
    while node != NO_NODE and g.next[node] != NO_NODE:
        heap_push(g, k, node, Vc)
        node = g.next[node]


cdef inline bint entry_valid(Budget *g, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t left = g.h_left[i], right = g.h_right[i]
    return (g.version[left] == g.h_vl[i] and g.version[right] == g.h_vr[i]
            and g.next[left] == right)


cdef void merge_smallest(Budget *g, Py_ssize_t k, floating *V, floating *Vb, double *Vc,
                         Py_ssize_t d) noexcept nogil:
    """Merge output k's adjacent pair with the smallest summed count into the left node."""
    cdef Py_ssize_t base = k * g.H, left, right, j
    cdef double cl, cr, c
    while g.heap_size[k] > 0 and not entry_valid(g, base):
        heap_pop(g, k)
    if g.heap_size[k] == 0:         # cannot happen with >= 2 nodes; rebuild and retry once
        heap_rebuild(g, k, Vc)
        if g.heap_size[k] == 0:
            return
    left, right = g.h_left[base], g.h_right[base]
    heap_pop(g, k)
    cl, cr = Vc[left], Vc[right]
    c = cl + cr
    for j in range(d):
        V[left * d + j] = <floating> ((cl * V[left * d + j] + cr * V[right * d + j]) / c)
    Vb[left] = <floating> ((cl * Vb[left] + cr * Vb[right]) / c)
    Vc[left] = c
    g.version[left] += 1
    g.version[right] += 1           # dead: any entry naming it is stale
    g.next[left] = g.next[right]
    if g.next[right] != NO_NODE:
        g.prev[g.next[right]] = left
    else:
        g.tail[k] = left
    g.next[right] = g.prev[right] = NO_NODE
    g.free_slots[g.n_free] = right
    g.n_free += 1
    g.length[k] -= 1
    if g.prev[left] != NO_NODE:
        heap_push(g, k, g.prev[left], Vc)
    heap_push(g, k, left, Vc)


cdef inline double row_dot(bint sparse, const floating *w, const floating *X, Py_ssize_t d,
                           const floating *data, const int *indices, const int *indptr,
                           Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t p
    cdef double total = 0.0
    if not sparse:
        return fm_dot(<int> d, w, &X[i * d])
    for p in range(indptr[i], indptr[i + 1]):
        total += w[indices[p]] * data[p]
    return total


cdef inline double row_sq(bint sparse, const floating *X, Py_ssize_t d, const floating *data,
                          const int *indptr, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t p
    cdef double total = 0.0
    if not sparse:
        for p in range(d):
            total += <double> X[i * d + p] * X[i * d + p]
        return total
    for p in range(indptr[i], indptr[i + 1]):
        total += <double> data[p] * data[p]
    return total


cdef inline void row_axpy(bint sparse, floating a, floating *w, const floating *X,
                          Py_ssize_t d, const floating *data, const int *indices,
                          const int *indptr, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t p
    if not sparse:
        for p in range(d):
            w[p] += a * X[i * d + p]
        return
    for p in range(indptr[i], indptr[i + 1]):
        w[indices[p]] += a * data[p]


cdef inline double mistake_visits(double s, double z, double q) noexcept nogil:
    """How many of a row's ceil(s) visits output k errs on (z <= 0: the first one does)."""
    cdef double visits = ceil(s), needed
    if q <= 0.0:
        return visits
    needed = floor(-z / q) + 1.0
    return needed if needed < visits else visits


def voted_pass(const floating[:, ::1] X, const floating[::1] data, const int[::1] indices,
               const int[::1] indptr, bint sparse, const double[:, ::1] T,
               const double[::1] sw, const Py_ssize_t[::1] order, Py_ssize_t first,
               floating[:, ::1] W, floating[::1] b, double[::1] live, bint fit_intercept,
               floating[:, ::1] V, floating[::1] Vb, double[::1] Vc, Py_ssize_t[::1] out,
               Py_ssize_t n_used, Py_ssize_t budget, double[::1] margins,
               Py_ssize_t[:, ::1] links, long long[:, ::1] stamps, Py_ssize_t[:, ::1] lists,
               double[::1] h_key, long long[:, ::1] h_stamps, Py_ssize_t[:, ::1] h_nodes):
    """The perceptron's pass over rows order[first:] (X dense (n, d), or CSR data / indices /
    indptr with `sparse`), signed targets T (n, K), weights sw; the live vectors W (K, d), b (K,)
    with counts `live` (K,), and the store V / Vb / Vc / out of n_used finished vectors;
    margins (K,) is scratch.

    A row whose vectors do not fit the store's free rows stops the pass before it (nothing
    of it done), and the call returns so the caller can grow the store (to at most
    K (budget + 1) + 1 rows with a budget, which always fits a row: the vectors beyond the
    budget merge as they come). With a budget the store's rows are reused: scratch
    arrays hold the lists (links (3, cap): prev, next, the free slots; stamps (2, cap):
    versions and ages; lists (4, K): heads, tails, lengths, heap sizes) and the heaps
    (h_key, h_stamps (3, K * H), h_nodes (2, K * H), H >= 2 (min(budget, cap) + 2)); at the
    end links[0, :n_used] holds the live slots in order (output after output, each in
    order) for the caller to gather.

    Returns (next row position in order, n_used, mistake visits, rows of the store needed
    to go on or 0)."""
    cdef Py_ssize_t n = T.shape[0], K = T.shape[1], d = W.shape[1], cap = V.shape[0]
    cdef Py_ssize_t r, i, k, j, slot, node, H = 0, needed_rows, short = 0
    cdef double s, t, z, q, u, visits, left_over, most
    cdef long long mistakes = 0
    cdef const floating *Xp = &X[0, 0] if not sparse else NULL
    cdef const floating *dp = &data[0] if sparse and data.shape[0] else NULL
    cdef const int *ip = &indices[0] if sparse and indices.shape[0] else NULL
    cdef const int *pp = &indptr[0] if sparse else NULL
    cdef Budget g
    if (W.shape[0] != K or b.shape[0] != K or live.shape[0] != K or sw.shape[0] != n
            or margins.shape[0] != K or V.shape[1] != d or Vb.shape[0] != cap
            or Vc.shape[0] != cap or out.shape[0] != cap or not 0 <= n_used <= cap
            or not 0 <= first <= order.shape[0]
            or (not sparse and (X.shape[0] != n or X.shape[1] != d))
            or (sparse and (indptr.shape[0] != n + 1 or data.shape[0] != indices.shape[0]))):
        raise ValueError("voted_pass: shapes do not agree")
    for r in range(first, order.shape[0]):
        if not 0 <= order[r] < n:
            raise ValueError("voted_pass: a row index is out of range")
    if budget > 0:
        H = h_key.shape[0] // K
        if (links.shape[0] != 3 or links.shape[1] != cap
                or stamps.shape[0] != 2 or stamps.shape[1] != cap or lists.shape[0] != 4
                or lists.shape[1] != K or H < 2 * (min(budget, cap) + 2) or h_key.shape[0] != K * H
                or h_stamps.shape[0] != 3 or h_stamps.shape[1] != K * H
                or h_nodes.shape[0] != 2 or h_nodes.shape[1] != K * H):
            raise ValueError("voted_pass: the budget's scratch arrays do not agree")
        for node in range(n_used):
            if not 0 <= out[node] < K:
                raise ValueError("voted_pass: a stored vector names an output that does not "
                                 "exist")
        g.prev, g.next, g.free_slots = &links[0, 0], &links[1, 0], &links[2, 0]
        g.version, g.seq = &stamps[0, 0], &stamps[1, 0]
        g.head, g.tail, g.length = &lists[0, 0], &lists[1, 0], &lists[2, 0]
        g.h_key, g.h_seq = &h_key[0], &h_stamps[0, 0]
        g.h_vl, g.h_vr = &h_stamps[1, 0], &h_stamps[2, 0]
        g.h_left, g.h_right = &h_nodes[0, 0], &h_nodes[1, 0]
        g.heap_size, g.H = &lists[3, 0], H
    with nogil:
        if budget > 0:
            _build_lists(&g, &out[0], n_used, cap, K, &Vc[0])
        r = first
        while r < order.shape[0]:
            i = order[r]
            s = sw[i]
            if s == 0.0:                    # weight 0: the row is not there
                r += 1
                continue
            q = row_sq(sparse, Xp, d, dp, pp, i) + (1.0 if fit_intercept else 0.0)
            needed_rows = 0
            most = 0.0
            for k in range(K):
                z = T[i, k] * (row_dot(sparse, &W[k, 0], Xp, d, dp, ip, pp, i) + b[k])
                margins[k] = z
                if z <= 0.0:
                    visits = mistake_visits(s, z, q)
                    if visits > MAX_ROW_VECTORS:
                        with gil:
                            raise ValueError(
                                f"sample_weight {s:g} of row {i} would add {visits:.3g} "
                                f"vectors (as many copies of the row in a row would): divide "
                                f"the weights by a common factor")
                    most = max(most, visits)
                    visits = 1.0 if q == 0.0 else visits
                    # the rows of the store this output's vectors keep (with a budget, those
                    # beyond it merge as they come: one spare row is enough for them)
                    needed_rows += <Py_ssize_t> visits if budget == 0 else \
                        min(<Py_ssize_t> visits, max(budget - g.length[k], 0))
            if budget > 0:
                needed_rows += 1
            if needed_rows > (cap - n_used if budget == 0 else g.n_free):
                short = cap + needed_rows       # the caller grows the store and goes on
                break
            mistakes += <long long> most
            for k in range(K):
                z = margins[k]
                if z > 0.0:
                    live[k] += s
                    continue
                t = T[i, k]
                # q = 0: x adds nothing, every visit leaves the same vector: one for them all
                visits = 1.0 if q == 0.0 else mistake_visits(s, z, q)
                left_over = s
                for j in range(<Py_ssize_t> visits):
                    u = s if q == 0.0 else (left_over if left_over < 1.0 else 1.0)
                    if live[k] > 0.0:       # finish the live vector (the first has no vote)
                        slot = n_used if budget == 0 else _take_slot(&g)
                        memcpy(&V[slot, 0], &W[k, 0], d * sizeof(floating))
                        Vb[slot], Vc[slot], out[slot] = b[k], live[k], k
                        if budget == 0:
                            n_used += 1
                        else:
                            _append(&g, k, slot, &Vc[0])
                            if g.length[k] > budget:
                                merge_smallest(&g, k, &V[0, 0], &Vb[0], &Vc[0], d)
                    row_axpy(sparse, <floating> (u * t), &W[k, 0], Xp, d, dp, ip, pp, i)
                    if fit_intercept:
                        b[k] += <floating> (u * t)
                    live[k] = u
                    left_over -= u
                live[k] += left_over        # the visits after the last mistake
            r += 1
        if budget > 0:
            n_used = _placed(&g, K, &links[0, 0])
    return r, n_used, mistakes, short


cdef inline Py_ssize_t _take_slot(Budget *g) noexcept nogil:
    g.n_free -= 1
    return g.free_slots[g.n_free]


cdef void _append(Budget *g, Py_ssize_t k, Py_ssize_t slot, const double *Vc) noexcept nogil:
    """Put `slot` at the end of output k's list (and its pair with the old end on the heap)."""
    g.version[slot] += 1
    g.seq[slot] = g.next_seq
    g.next_seq += 1
    g.next[slot] = NO_NODE
    g.prev[slot] = g.tail[k]
    if g.tail[k] != NO_NODE:
        g.next[g.tail[k]] = slot
    else:
        g.head[k] = slot
    g.tail[k] = slot
    g.length[k] += 1
    if g.prev[slot] != NO_NODE:
        heap_push(g, k, g.prev[slot], Vc)


cdef void _build_lists(Budget *g, const Py_ssize_t *out, Py_ssize_t n_used, Py_ssize_t cap,
                       Py_ssize_t K, const double *Vc) noexcept nogil:
    """Lists and heaps of the stored vectors (output k's in store order); the other slots
    free."""
    cdef Py_ssize_t k, node
    for k in range(K):
        g.head[k] = g.tail[k] = NO_NODE
        g.length[k] = 0
        g.heap_size[k] = 0
    g.next_seq = 0
    g.n_free = 0
    for node in range(cap):
        g.version[node] = 0
    for node in range(n_used):
        _append(g, out[node], node, Vc)
    for node in range(cap - 1, n_used - 1, -1):
        g.free_slots[g.n_free] = node
        g.n_free += 1


cdef Py_ssize_t _placed(Budget *g, Py_ssize_t K, Py_ssize_t *placed) noexcept nogil:
    """Write the live slots, output after output and each list in order, into placed (the
    prev array, no longer needed); return how many."""
    cdef Py_ssize_t k, node, count = 0
    for k in range(K):
        node = g.head[k]
        while node != NO_NODE:
            placed[count] = node
            count += 1
            node = g.next[node]
    return count
