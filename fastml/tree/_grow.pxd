# What fastml's two tree builders share. The exact sorted sweep (_builder_fast.pyx) and the
# histogram search (_hist_fast.pyx) grow the same trees by the same rules; what those rules
# do not need to know about a builder's storage of a node's rows lives here, once:
#   - the criterion codes and the impurity of a child from its class counts or target sum;
#   - 000's threshold midpoint (split_point);
#   - the record of a split and the tie rule that makes the tree independent of the search
#     order and of the thread count (clear_split, takes, first_within);
#   - the order in which a node draws its candidate features (Draw);
#   - a node's life: its leaf in the TreeBuffer (open_node), the base cases, its gain, its
#     class-count value, then the internal node, its children and their table (add_children);
#   - the frontier of nodes waiting to be split and the growth loop over it (grow_frontier:
#     depth-first, best-first by gain with max_leaf_nodes).
# Every function is inline, so each builder compiles to the loops it had with them in place.
from libc.math cimport NAN, INFINITY, log2
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from libc.stdint cimport uint64_t
from .._core._typedefs cimport count_t, index_t
from ._tree_fast cimport (Node, TreeBuffer, Tree, KIND_LEAF, KIND_THRESHOLD, KIND_CATEGORICAL,
                          buffer_reserve, buffer_add_leaf, buffer_free, grow_array,
                          tree_from_buffer)

cdef enum:
    CRIT_ENTROPY = 0     # _builder_fast.CRITERIA maps the estimators' names to these
    CRIT_GINI = 1
    CRIT_SSE = 2
    FIRST_FRONTIER = 256 # first capacity of the frontier (it doubles when full): depth-first
                         # growth keeps about depth x children nodes on it, so it rarely grows


# ---------------------------------------------------------------- impurity
#
# Class statistics come in two kinds, one compiled copy of the code for each (a fused type):
# counts (count_t) when every row weighs 1 -- a bootstrap repeat is a row of its own -- and
# weights (double) when the fit has sample weights. Both compute the same formulas: with
# integer weights the double copy gives the counts' results bit for bit (x log2 x of an
# integer-valued double is the table's entry, and sums of integers below 2^53 are exact), so a
# weighted fit equals the fit on repeated rows.

ctypedef fused weight_t:  # a class count or summed weight
    count_t
    double


cdef inline double xlog2x(weight_t w, const double *nlogn) noexcept nogil:
    """w log2 w (0 at 0): the counts' n log2 n table, or computed for a weight (the table's
    entries are this very expression, i * log2(i), so both give the same bits)."""
    if weight_t is double:
        return w * log2(w) if w > 0.0 else 0.0
    else:
        return nlogn[w]


cdef inline double counts_term(int criterion, int K, const double *nlogn, const weight_t *counts,
                               weight_t n) noexcept nogil:
    """n * impurity of a child with these class counts (entropy in bits from the n log2 n
    table, or Gini); the entropy needs no log and the Gini no division per class."""
    cdef int c
    cdef double s = 0.0
    if criterion == CRIT_ENTROPY:
        s = xlog2x(n, nlogn)
        for c in range(K):
            s -= xlog2x(counts[c], nlogn)
        return s
    if n <= 0:
        return 0.0
    for c in range(K):
        s += <double> counts[c] * counts[c]
    return n - s / n


cdef inline double counts_term2(int criterion, int K, const double *nlogn, const weight_t *a,
                                const weight_t *extra, weight_t n) noexcept nogil:
    """counts_term of the counts a + extra (a child that also receives the missing rows)."""
    cdef int c
    cdef double s = 0.0
    if criterion == CRIT_ENTROPY:
        s = xlog2x(n, nlogn)
        for c in range(K):
            s -= xlog2x(a[c] + extra[c], nlogn)
        return s
    if n <= 0:
        return 0.0
    for c in range(K):
        s += <double> (a[c] + extra[c]) * (a[c] + extra[c])
    return n - s / n


cdef inline bint allowed(count_t rows, weight_t w, count_t min_rows,
                         double min_weight) noexcept nogil:
    """Whether a child of these rows and weight may be made: min_samples_leaf counts rows
    (bootstrap repeats included), min_weight_fraction_leaf weighs them. A count build has
    folded the weight limit into min_rows (its rows are its weight)."""
    if weight_t is double:
        return rows >= min_rows and w >= min_weight
    else:
        return rows >= min_rows


ctypedef fused rows_t:   # a child's size: rows (exact builder) or summed weights (histograms)
    count_t
    double


cdef inline double sse_term(double s, rows_t n) noexcept nogil:
    """-(sum^2 / n): the SSE of a child up to its sum of squares (which no split changes).
    Compiled for the caller's type of n: an integer test of n == 0 keeps the exact sweep's
    loop as short as when it had its own copy."""
    return 0.0 if n == 0 else -s * s / n


cdef inline double split_point(double lo, double hi) noexcept nogil:
    """000's x_i + (x_{i+1} - x_i)/2, nudged to hi if rounding would put lo on the wrong side
    (both builders cut with it, and the hist binning places its quantile edges with it). When
    the gap overflows (lo = -1e308, hi = 1e308), lo/2 + hi/2, which cannot."""
    cdef double gap = hi - lo
    cdef double t = lo + gap / 2.0 if gap != INFINITY else lo / 2.0 + hi / 2.0
    if not (lo < t and t <= hi):
        t = hi
    return t


# ---------------------------------------------------------------- a split and the tie rule

ctypedef struct Split:
    int feature          # -1: no valid split
    double threshold     # real splits: x < threshold goes left (exact binary categorical
                         # splits: the number of levels, in `ordering`, that go left)
    int missing_left     # real splits: missing rows go left (1) or right (0)
    int n_children       # children the split makes: 2, or the levels present at the node
    double cost          # sum over children of n_child * impurity(child)
    double limit         # first_within: the first candidate whose cost is <= limit wins
    int first_within     # 0: keep the (first) smallest cost
    int ordering         # exact builder, binary categorical: the level order of the partition
    int cut              # histogram builder: the last bin of the left child
    int cut_next         # and the first bin of the right one (at this node)
    void *left_counts    # exact builder, binary mode's attribute selection: where the sweep
                         # keeps the class counts (weight_t) of the best split's first child
                         # (NULL: not kept)


cdef inline void clear_split(Split *split, double limit, int first_within) noexcept nogil:
    split.feature = -1
    split.cost = INFINITY
    split.limit = limit
    split.first_within = first_within
    split.left_counts = NULL


cdef inline int takes(Split *best, double cost, int feature, int missing_left,
                      int n_children) noexcept nogil:
    """The tie rule: record the candidate if it is the first one within best.limit
    (first_within), or the first one of the smallest cost so far; 1 if it was recorded (the
    caller then records where the cut is)."""
    if (best.feature < 0 and cost <= best.limit) or (not best.first_within and cost < best.cost):
        best.feature = feature
        best.missing_left = missing_left
        best.n_children = n_children
        best.cost = cost
        return 1
    return 0


cdef inline double cost_tie(int criterion, double tie, double n, double node_ss) noexcept nogil:
    """The tolerance within which two split costs of a node tie. The class criteria's costs
    are n * impurity from integer counts: tie bits per row. Regression's are sums of squares
    in y's units squared, summed in float64: a fixed tolerance there would make the tree
    depend on y's units, and at |y| ~ 1e3 and more the rounding of two equal costs already
    exceeds it (two builders summing in different orders then pick different cuts). So it is
    relative: tie times the node's sum of squared deviations."""
    if criterion == CRIT_SSE:
        return tie * node_ss
    return tie * n


cdef inline int first_within(const Split *found, int n_cand, double tol,
                             double *limit) noexcept nogil:
    """Of each candidate feature's best split, the first whose cost is within tol of the least
    (its index, -1 if none is valid); limit = least + tol, for the second pass that finds that
    feature's first such candidate. Two passes make the pick independent of the order (and the
    threads) the features were searched in."""
    cdef int i
    cdef double least = INFINITY
    for i in range(n_cand):
        if found[i].feature >= 0 and found[i].cost < least:
            least = found[i].cost
    limit[0] = least + tol
    for i in range(n_cand):
        if found[i].feature >= 0 and found[i].cost <= limit[0]:
            return i
    return -1


# ---------------------------------------------------------------- the candidate features' draw
#
# With max_features < n_features a node tries the first max_features features, in a random
# order, that vary at the node. The order is a sort of the features by a key, a hash of the
# node's seed and the feature (draw_key), so the position of any feature in it is known
# without drawing the others: a node of sparse data can rank just the few features present
# in its rows (the rest are constant there) and get the order a dense node gets. The seed of
# a node is a hash of its parent's and its child index (child_seed; the root's comes from the
# tree's seed), so no node's draw depends on the order the nodes are grown in. The keys make
# a uniformly random order, as the random permutation they replace did.

ctypedef struct KeyedFeature:
    uint64_t key
    int feature


ctypedef struct Draw:         # the features of a node in draw order (a heap of their keys)
    KeyedFeature *heap        # (n_features) room for every feature
    int n                     # features left in the heap
    int next                  # all features, in index order (no randomness): the next one
    int natural               # 1: index order


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """splitmix64's finalizer: a bijection of 64-bit words that mixes every bit."""
    z = (z ^ (z >> 30)) * <uint64_t> 0xbf58476d1ce4e5b9
    z = (z ^ (z >> 27)) * <uint64_t> 0x94d049bb133111eb
    return z ^ (z >> 31)


cdef inline uint64_t draw_key(uint64_t seed, int feature) noexcept nogil:
    return mix64(seed + (<uint64_t> feature + 1) * <uint64_t> 0x9e3779b97f4a7c15)


cdef inline uint64_t child_seed(uint64_t seed, int c) noexcept nogil:
    return mix64(seed ^ mix64((<uint64_t> c + 1) * <uint64_t> 0xd1b54a32d192ed03))


cdef inline bint key_before(const KeyedFeature *a, const KeyedFeature *b) noexcept nogil:
    return a.key < b.key or (a.key == b.key and a.feature < b.feature)


cdef inline void sift_down(KeyedFeature *h, int n, int i) noexcept nogil:
    cdef int child
    cdef KeyedFeature tmp
    while True:
        child = 2 * i + 1
        if child >= n:
            return
        if child + 1 < n and key_before(&h[child + 1], &h[child]):
            child += 1
        if not key_before(&h[child], &h[i]):
            return
        tmp = h[i]
        h[i] = h[child]
        h[child] = tmp
        i = child


cdef inline void draw_begin(Draw *dr, const int *features, int n, int n_features,
                            index_t max_features, uint64_t seed) noexcept nogil:
    """Start the node's draw over features[0:n] (NULL: all n_features): index order when
    max_features >= n_features (every feature is tried, no randomness), else the keys' order.
    O(n) to start, O(log n) per draw."""
    cdef int i
    dr.natural = max_features >= n_features
    dr.next = 0
    dr.n = n
    if dr.natural:
        return
    for i in range(n):
        dr.heap[i].feature = features[i] if features != NULL else i
        dr.heap[i].key = draw_key(seed, dr.heap[i].feature)
    i = n // 2 - 1
    while i >= 0:
        sift_down(dr.heap, n, i)
        i -= 1


cdef inline int draw_next(Draw *dr, const int *features) noexcept nogil:
    """The next feature of the draw, -1 when every one has been drawn (features: as given to
    draw_begin, for the index order)."""
    cdef int f
    if dr.natural:
        if dr.next >= dr.n:
            return -1
        dr.next += 1
        return features[dr.next - 1] if features != NULL else dr.next - 1
    if dr.n == 0:
        return -1
    f = dr.heap[0].feature
    dr.n -= 1
    dr.heap[0] = dr.heap[dr.n]
    sift_down(dr.heap, dr.n, 0)
    return f


cdef inline int missing_side(int has_missing, int missing_left, double w_left,
                             double w_right) noexcept nogil:
    """The child of the missing rows at a real split: the learned side where the node saw
    missing values, else the child of most training weight (the majority path, where a
    missing value goes at predict time), left on ties."""
    if has_missing:
        return 0 if missing_left else 1
    return 0 if w_left >= w_right else 1


# ---------------------------------------------------------------- a node waiting to be split

ctypedef struct Item:
    index_t node
    uint64_t seed             # the node's draw of candidate features (child_seed)
    Py_ssize_t start, end     # its rows: positions [start, end) of the builder's arrays
    count_t n                 # their number, bootstrap repeats included (n_node_samples)
    double w                  # their weight (weighted_n_node_samples; n without weights)
    index_t depth
    double gain               # per unit of weight
    double priority           # best-first order: w * gain, the total reduction of impurity
    Split split
    char *hist                # histogram builder: the node's histograms of every feature
                              # (kept for the subtraction trick), or NULL


cdef inline index_t open_node(TreeBuffer *t, Item *item, Py_ssize_t start, Py_ssize_t end,
                              count_t n, double w, index_t depth) noexcept nogil:
    """A new leaf for rows [start, end), n rows of total weight w, described in item; its id,
    or -1 when memory runs out."""
    item.node = buffer_add_leaf(t, depth, n, w)
    item.start = start
    item.end = end
    item.n = n
    item.w = w
    item.depth = depth
    return item.node


cdef inline void set_weight(TreeBuffer *t, Item *item, double w) noexcept nogil:
    """The weight of item's node, once its statistics are known."""
    item.w = w
    t.nodes[item.node].weighted_n_node_samples = w


cdef inline int base_case(int pure, index_t depth, count_t n, double w, index_t max_depth,
                          index_t min_samples_split, index_t min_samples_leaf,
                          double min_weight_leaf) noexcept nogil:
    """Whether the node stays a leaf before any search: its outputs all agree (000's first
    base case), or a limit forbids splitting it (001; min_weight_leaf as scikit-learn's)."""
    return pure or depth >= max_depth or n < min_samples_split or n < 2 * min_samples_leaf \
        or w < 2.0 * min_weight_leaf


cdef inline int set_gain(Item *item, double parent_term) noexcept nogil:
    """After the search: 0 if no split was found (000's second base case: no attribute takes
    two values here), else 1 with the split's gain per unit of weight and its best-first
    priority."""
    if item.split.feature < 0:
        return 0
    item.gain = (parent_term - item.split.cost) / item.w
    if item.gain < 0.0:
        item.gain = 0.0  # round-off: a split never increases impurity
    item.priority = item.gain * item.w
    return 1


cdef inline int class_value(TreeBuffer *t, index_t node, int criterion, int K,
                            const double *nlogn, const weight_t *counts, weight_t n,
                            double *parent_term) noexcept nogil:
    """A classification node's value (its class counts or weights) and impurity; parent_term
    = its counts_term, which the split's cost is compared with. Returns 1 for a pure node
    (at most one class present)."""
    cdef double *value = t.value + <Py_ssize_t> node * t.n_values
    cdef int c, present = 0
    for c in range(K):
        value[c] = <double> counts[c]
        present += counts[c] > 0
    parent_term[0] = counts_term(criterion, K, nlogn, counts, n)
    t.nodes[node].impurity = parent_term[0] / n
    return present <= 1


cdef inline index_t open_split(TreeBuffer *t, const Item *item, int categorical,
                               index_t L) noexcept nogil:
    """Turn item's leaf into the internal node of item.split with L children entries (2, or
    one per level of the column); its first entry in the children table, or -1 when memory
    runs out. The children are created next, then link_children fills the entries."""
    cdef Node *split
    cdef index_t start
    if t.n_children + L > t.cap_children and \
            buffer_reserve(t, t.cap_nodes, 2 * (t.n_children + L)) < 0:
        return -1
    split = &t.nodes[item.node]
    split.kind = KIND_CATEGORICAL if categorical else KIND_THRESHOLD
    split.feature = item.split.feature
    split.threshold = NAN if categorical else item.split.threshold
    split.gain = item.gain
    split.child_start = start = t.n_children
    split.n_child = L
    t.n_children += L
    return start


cdef inline void link_children(TreeBuffer *t, index_t node, index_t start, index_t first_child,
                               int categorical, index_t L, const int *child_of_level,
                               const int *level_seen) noexcept nogil:
    """The children table of a split node whose children are nodes first_child.. (in child
    order): threshold nodes [left, right]; categorical nodes one entry per level code, by
    child_of_level (whose entry L, or 0 for a threshold, is the missing rows' child)."""
    cdef index_t v
    if categorical:
        for v in range(L):
            t.children[start + v] = first_child + child_of_level[v]
            t.seen[start + v] = level_seen[v]
        t.nodes[node].missing_child = first_child + child_of_level[L]
    else:
        t.children[start] = first_child
        t.children[start + 1] = first_child + 1
        t.seen[start] = 1
        t.seen[start + 1] = 1
        t.nodes[node].missing_child = first_child + child_of_level[0]


# ---------------------------------------------------------------- the frontier and growth

ctypedef struct Frontier:      # the nodes waiting to be split
    Item *items
    int n, cap


cdef inline int frontier_push(Frontier *fr, const Item *item) noexcept nogil:
    """Append item (the array doubles when full); -1 when memory runs out."""
    if fr.n == fr.cap:
        if grow_array(<void **> &fr.items, 2 * fr.cap, sizeof(Item)) < 0:
            return -1
        fr.cap *= 2
    fr.items[fr.n] = item[0]
    fr.n += 1
    return 0


cdef inline void reverse(Item *items, int lo, int hi) noexcept nogil:
    """Reverse items[lo:hi] (a split's children, so the first child is grown next)."""
    cdef Item tmp
    hi -= 1
    while lo < hi:
        tmp = items[lo]
        items[lo] = items[hi]
        items[hi] = tmp
        lo += 1
        hi -= 1


ctypedef int (*child_fn)(void *builder, TreeBuffer *t, const Item *parent, int c,
                        Py_ssize_t *lo, Item *child) noexcept nogil
ctypedef int (*split_fn)(void *builder, TreeBuffer *t, Item *item, Frontier *fr) noexcept nogil
ctypedef void (*drop_fn)(void *builder, Item *item) noexcept nogil


cdef inline int add_children(void *builder, TreeBuffer *t, const Item *item, Frontier *fr,
                             int k, int categorical, index_t n_levels, const int *child_of_level,
                             const int *level_seen, child_fn make_child) noexcept nogil:
    """The second half of a split, once the builder has partitioned the node's rows into k
    children: item's node becomes internal (one children entry per level of a categorical
    column of n_levels, else 2), make_child creates child c from the rows at lo (moving lo past
    them; 1 to split it, 0 a leaf, -1 out of memory), the children to split go on the frontier
    and the children table is filled. Returns k, or -1 when memory runs out."""
    cdef index_t L = n_levels if categorical else 2
    cdef index_t start = open_split(t, item, categorical, L), first_child = t.n_nodes
    cdef Py_ssize_t lo = item.start
    cdef int c, r
    cdef Item child
    if start < 0:
        return -1
    for c in range(k):
        child.split.feature = -1
        child.seed = child_seed(item.seed, c)
        r = make_child(builder, t, item, c, &lo, &child)
        if r < 0 or (r == 1 and frontier_push(fr, &child) < 0):
            return -1
    link_children(t, item.node, start, first_child, categorical, L, child_of_level, level_seen)
    return k


cdef inline int grow_frontier(void *builder, TreeBuffer *t, Item *root, int root_status,
                              index_t max_leaf_nodes, double tie, split_fn split_node,
                              drop_fn drop) noexcept nogil:
    """Grow the tree from the root item (root_status: the builder's make_node result, 1 to
    split it, 0 a leaf, -1 out of memory). Depth-first: the last node pushed is split next;
    with max_leaf_nodes, best-first: the frontier node of the largest priority (the first
    within tie), and a split that would exceed the leaf budget leaves its node a leaf (drop
    releases what the builder kept for it). split_node creates the children, pushes those to
    split and returns their number, or -1 when memory runs out. Returns 0, or -1."""
    cdef Frontier fr
    cdef int n_leaves = 1, i, pick, before, k, status = 0
    cdef Item item
    fr.n, fr.cap = 0, FIRST_FRONTIER
    fr.items = <Item *> malloc(fr.cap * sizeof(Item))
    if fr.items == NULL or root_status < 0:
        free(fr.items)
        return -1
    if root_status == 1:
        frontier_push(&fr, root)
    while fr.n > 0:
        if max_leaf_nodes > 0:
            pick = fr.n - 1
            for i in range(fr.n):
                if fr.items[i].priority > fr.items[pick].priority + tie:
                    pick = i
            item = fr.items[pick]
            fr.items[pick] = fr.items[fr.n - 1]
            fr.n -= 1
            if n_leaves + item.split.n_children - 1 > max_leaf_nodes:
                drop(builder, &item)
                continue  # no budget for this split: the node stays a leaf
        else:
            fr.n -= 1
            item = fr.items[fr.n]
        before = fr.n
        k = split_node(builder, t, &item, &fr)
        if k < 0:
            status = -1
            break
        n_leaves += k - 1
        reverse(fr.items, before, fr.n)
        if max_leaf_nodes > 0 and n_leaves >= max_leaf_nodes:
            break
    free(fr.items)
    return status


cdef inline object finish_tree(TreeBuffer *t, int status):
    """The grown tree as a Tree (MemoryError if growth ran out of memory); frees t."""
    try:
        if status < 0:
            raise MemoryError("not enough memory to grow the tree")
        return tree_from_buffer(t)
    finally:
        buffer_free(t)



# ---------------------------------------------------------------- subtrees grown apart
#
# A builder may grow the subtrees under some nodes in other threads, each into a buffer of its
# own (its node 0 a copy of the subtree's root, grown there). merge_subtrees numbers the nodes
# of the whole tree as the depth-first growth (grow_frontier) numbers them -- a node's
# children take the next ids when it is split, nodes are split depth first, first child first
# -- so the tree is the one a single thread grows, node for node. A node's children in a
# buffer are the ids first..last of its children entries (made one after the other when it
# was split), so the order needs nothing but the finished arrays. Global ids: main's nodes,
# then each task buffer's (base[k] is buffer k's first; buffer 0 is main).

cdef inline int buffer_of(const index_t *base, int n_tasks, index_t g) noexcept nogil:
    """The buffer (0: main, k: task k - 1) of global node id g."""
    cdef int k = n_tasks
    while k > 0 and g < base[k]:
        k -= 1
    return k


cdef inline index_t global_child(const index_t *base, const index_t *redirect, int k,
                                 index_t c) noexcept nogil:
    """The global id of node c of buffer k (a task's root when c is a node of main whose
    subtree a task grew)."""
    return redirect[c] if k == 0 else base[k] + c


cdef inline int merge_subtrees(TreeBuffer *main, const index_t *task_node, TreeBuffer *tasks,
                               int n_tasks, TreeBuffer *out) noexcept nogil:
    """The tree of main with tasks[i]'s subtree in place of main's node task_node[i], into
    the empty buffer out (buffer_init'ed), numbered as above. Returns 0, or -1 when memory
    runs out."""
    cdef index_t total = main.n_nodes, i, g, c, e, first, last, n_out = 1, n_entries = 0, p
    cdef index_t *base = <index_t *> malloc((n_tasks + 2) * sizeof(index_t))
    cdef index_t *redirect = <index_t *> malloc((main.n_nodes + 1) * sizeof(index_t))
    cdef index_t *new_id
    cdef index_t *order
    cdef index_t *stack
    cdef index_t *entry_start
    cdef int k, status = 0
    cdef TreeBuffer *buf
    cdef Node *nd
    if base == NULL or redirect == NULL:
        free(base)
        free(redirect)
        return -1
    base[0] = 0
    for k in range(n_tasks):
        base[k + 1] = total
        total += tasks[k].n_nodes
    new_id = <index_t *> malloc(total * sizeof(index_t))
    order = <index_t *> malloc(total * sizeof(index_t))
    stack = <index_t *> malloc(total * sizeof(index_t))
    entry_start = <index_t *> malloc(total * sizeof(index_t))
    if new_id == NULL or order == NULL or stack == NULL or entry_start == NULL:
        status = -1
    else:
        for i in range(main.n_nodes):
            redirect[i] = i
        for k in range(n_tasks):
            redirect[task_node[k]] = base[k + 1]
        # pop a node; if it was split, its children take the next ids and are pushed, the
        # first on top; its children entries are the next block of the table
        order[0] = redirect[0]
        new_id[order[0]] = 0
        stack[0] = order[0]
        p = 1
        while p > 0:
            p -= 1
            g = stack[p]
            k = buffer_of(base, n_tasks, g)
            buf = main if k == 0 else &tasks[k - 1]
            nd = &buf.nodes[g - base[k]]
            if nd.kind == KIND_LEAF:
                continue
            entry_start[g] = n_entries
            n_entries += nd.n_child
            first = last = buf.children[nd.child_start]
            for e in range(nd.n_child):
                c = buf.children[nd.child_start + e]
                first = c if c < first else first
                last = c if c > last else last
            for c in range(first, last + 1):
                order[n_out] = global_child(base, redirect, k, c)
                new_id[order[n_out]] = n_out
                n_out += 1
            for c in range(last, first - 1, -1):
                stack[p] = global_child(base, redirect, k, c)
                p += 1
        status = copy_merged(main, tasks, base, n_tasks, redirect, new_id, order,
                             entry_start, n_out, n_entries, out)
    free(base); free(redirect); free(new_id); free(order); free(stack); free(entry_start)
    return status


cdef inline int copy_merged(TreeBuffer *main, TreeBuffer *tasks, const index_t *base,
                            int n_tasks, const index_t *redirect, const index_t *new_id,
                            const index_t *order, const index_t *entry_start, index_t n_nodes,
                            index_t n_entries, TreeBuffer *out) noexcept nogil:
    """merge_subtrees' second half: the nodes in their new order into out, their children
    entries renumbered."""
    cdef index_t j, g, i, e, cs
    cdef int k
    cdef TreeBuffer *buf
    cdef Node *nd
    if buffer_reserve(out, n_nodes, n_entries + 1) < 0:
        return -1
    for j in range(n_nodes):
        g = order[j]
        k = buffer_of(base, n_tasks, g)
        buf = main if k == 0 else &tasks[k - 1]
        i = g - base[k]
        nd = &out.nodes[j]
        nd[0] = buf.nodes[i]
        memcpy(out.value + j * out.n_values, buf.value + i * buf.n_values,
               out.n_values * sizeof(double))
        if nd.kind == KIND_LEAF:
            continue
        cs = buf.nodes[i].child_start
        nd.child_start = entry_start[g]
        nd.missing_child = new_id[global_child(base, redirect, k, buf.nodes[i].missing_child)]
        for e in range(nd.n_child):
            out.children[entry_start[g] + e] = new_id[global_child(base, redirect, k,
                                                                   buf.children[cs + e])]
            out.seen[entry_start[g] + e] = buf.seen[cs + e]
    out.n_nodes = n_nodes
    out.n_children = n_entries
    return 0
