"""``sklearn.tree`` with rustyml's tree engine behind DecisionTreeClassifier and
DecisionTreeRegressor.

A fit runs natively when the tree rustyml grows is the one scikit-learn grows: the
``best`` splitter over all features (``max_features`` resolving to ``n_features``), the
criteria ``gini``, ``entropy`` / ``log_loss`` and ``squared_error``, depth-first growth
(no ``max_leaf_nodes``), no ``sample_weight`` / ``class_weight`` / ``monotonic_cst`` /
``min_weight_fraction_leaf`` / ``min_impurity_decrease``, dense finite input and a single
output. Both trees search the same candidate thresholds (midpoints of consecutive distinct
values of the float32 input) and keep the split with the largest impurity decrease; they
differ only in how a tie is broken (scikit-learn visits the features in an order drawn
from ``random_state`` and keeps the first best). So the door checks every split the engine
chose and keeps the native tree only where scikit-learn would provably have chosen it too:

- the chosen split beats every other legal split of its node by more than the rounding of
  either computation of the score (bounded per criterion below), so no tie is broken;
- the values on either side of the chosen threshold differ by more than scikit-learn's
  ``FEATURE_THRESHOLD`` (1e-7; closer values count as equal there);
- a regression node the engine left as pure (or split as impure) is one scikit-learn's
  rounded impurity puts on the same side of its ``EPSILON`` test.

Otherwise scikit-learn's fit runs. After a native fit ``tree_`` is a genuine scikit-learn
``Tree`` built from the engine's nodes in scikit-learn's depth-first order, with its node
values and impurities computed by scikit-learn's formulas from the engine's per-node class
counts (bit for bit for a classifier; a regressor's means and variances are the engine's,
equal to rounding), so ``predict``, ``predict_proba``, ``apply``, ``decision_path``,
``feature_importances_``, cost-complexity pruning (classifier), pickling and ``clone`` are
scikit-learn's own code over that tree. The fit draws the same one number from
``random_state`` that scikit-learn's splitter draws, so a shared ``RandomState`` advances
as it would.
"""

import math
import numbers

import numpy as np
from scipy.sparse import issparse
from sklearn import tree as _sk
from sklearn.tree._tree import NODE_DTYPE, Tree
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from rustyml import _native
from rustyml.sklearn._dispatch import Unsupported, native_path, require

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]

_SkDecisionTreeClassifier = _sk.DecisionTreeClassifier
_SkDecisionTreeRegressor = _sk.DecisionTreeRegressor

EPS = np.finfo(np.float64).eps
# scikit-learn's constants: values closer than FEATURE_THRESHOLD count as equal; a node
# whose impurity is at most EPSILON is a leaf; the splitter draws one int below RAND_R_MAX.
_FEATURE_THRESHOLD = 1e-7
_EPSILON = EPS
_RAND_R_MAX = 2147483647
_TREE_LEAF = -1
_TREE_UNDEFINED = -2
# Columns of the engine's split report.
_FEATURE, _THRESHOLD, _LEFT, _N, _IMPURITY, _PROXY, _RUNNER_UP, _LOW, _HIGH = range(9)


def _check_params(est, classifier):
    require(est.splitter == "best", f"splitter={est.splitter!r}")
    require(est.max_leaf_nodes is None, "max_leaf_nodes (best-first growth)")
    require(est.min_weight_fraction_leaf == 0, "min_weight_fraction_leaf")
    require(est.min_impurity_decrease == 0, "min_impurity_decrease")
    require(est.monotonic_cst is None, "monotonic_cst")
    if classifier:
        require(est.criterion in ("gini", "entropy", "log_loss"), f"criterion={est.criterion!r}")
        require(est.class_weight is None, "class_weight")
    else:
        require(est.criterion == "squared_error", f"criterion={est.criterion!r}")
        require(est.ccp_alpha == 0, "ccp_alpha with a regression tree")


def _max_features(est, n_features):
    mf = est.max_features
    if mf is None:
        return n_features
    if isinstance(mf, str):
        return max(1, int(np.sqrt(n_features) if mf == "sqrt" else np.log2(n_features)))
    if isinstance(mf, numbers.Integral):
        return mf
    return max(1, int(mf * n_features)) if mf > 0.0 else 0


def _fit_tree(est, X, y, sample_weight, check_input, classifier):
    require(sample_weight is None, "sample_weight")
    require(check_input, "check_input=False")
    require(not issparse(X), "sparse X")
    est._validate_params()
    _check_params(est, classifier)
    X, y = validate_data(
        est,
        X,
        y,
        validate_separately=(
            {"dtype": np.float32, "accept_sparse": "csc", "ensure_all_finite": False},
            {"ensure_2d": False, "dtype": None},
        ),
    )
    require(not issparse(X), "sparse X")
    require(bool(np.isfinite(X).all()), "missing or infinite values in X")
    n_samples, n_features = X.shape
    y = np.atleast_1d(y)
    require(y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1), "several outputs")
    y = y.reshape(-1)
    require(len(y) == n_samples, "X and y of different lengths")
    max_features = _max_features(est, n_features)
    require(max_features == n_features, f"max_features={est.max_features!r}")
    min_leaf = est.min_samples_leaf
    if not isinstance(min_leaf, numbers.Integral):
        min_leaf = math.ceil(min_leaf * n_samples)
    min_split = est.min_samples_split
    if not isinstance(min_split, numbers.Integral):
        min_split = max(2, math.ceil(min_split * n_samples))
    min_split = max(min_split, 2 * min_leaf)
    if classifier:
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        target = codes.astype(np.float64)
        algorithm = "cart" if est.criterion == "gini" else "id3"
    else:
        target = np.ascontiguousarray(y, dtype=np.float64)
        require(bool(np.isfinite(target).all()), "non-finite y")
        algorithm = "cart"
    X64 = np.ascontiguousarray(X, dtype=np.float64)
    # scikit-learn's splitter draws its seed from random_state: draw the same number (so a
    # shared RandomState, or NumPy's global one, advances as it would), and put the state
    # back if scikit-learn's own fit is to run after all.
    random_state = check_random_state(est.random_state)
    saved = random_state.get_state()
    seed = int(random_state.randint(0, _RAND_R_MAX))
    try:
        grower = _Grower(X64, target, classifier, est, min_split, min_leaf, algorithm)
        tree = grower.grow(seed, len(classes) if classifier else 1)
    except Unsupported:
        random_state.set_state(saved)
        raise
    est.n_outputs_ = 1
    est.max_features_ = max_features
    if classifier:
        est.classes_ = classes
        est.n_classes_ = np.array([len(classes)], dtype=np.intp)[0]
    est.tree_ = tree
    est._prune_tree()
    return est


def _rand_int(low, high, state):
    """scikit-learn's ``rand_int`` (xorshift ``our_rand_r``): ``(value, new state)``."""
    s = state or 1
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    return low + (s % (_RAND_R_MAX + 1)) % (high - low), s


def _libm_log2(x):
    """scikit-learn's ``log``: C's ``log(x) / log(2.0)``, element by element (Python's
    ``math.log`` is the C library's; NumPy's vectorised log may differ in the last bit)."""
    uniq, inverse = np.unique(x, return_inverse=True)
    logs = np.array([math.log(v) for v in uniq.tolist()], dtype=np.float64) / math.log(2.0)
    return logs[inverse].reshape(x.shape)


class _Source:
    """One engine fit (of the whole training set, or of the samples under one node),
    checked where it can be: per node its statistics as scikit-learn forms them, whether
    its split is a clear winner (``tied`` otherwise) and whether scikit-learn tries to
    split it (``attempt``); and each node's training samples."""

    def __init__(self, grower, members, depth0):
        g = grower
        X, y = g.X[members], g.y[members]
        remaining = None if g.max_depth is None else g.max_depth - depth0
        if remaining == 0 or len(members) < 2:
            table, targets = self._leaf(g, y)
        else:
            engine = _native.machine_learning.DecisionTree(
                algorithm=g.algorithm,
                is_classifier=g.classifier,
                max_depth=remaining,
                min_samples_split=int(g.min_split),
                min_samples_leaf=int(g.min_leaf),
                random_state=None,
            )
            engine.fit(X, y)
            table, targets = engine.split_report()
            if g.classifier:  # the engine counts the classes present, in order
                full = np.zeros((len(table), g.n_classes))
                full[:, np.unique(y).astype(np.int64)] = targets
                targets = full
        self.table = table
        n = table[:, _N]
        self.n = n
        internal = table[:, _FEATURE] >= 0
        self.internal = internal
        self.left = table[:, _LEFT].astype(np.int64)
        depth = _depths(table) + depth0
        max_depth = np.iinfo(np.int32).max if g.max_depth is None else g.max_depth
        could_split = (depth < max_depth) & (n >= g.min_split) & (n >= 2 * g.min_leaf)
        if g.classifier:
            self.counts = targets
            self.values = targets / n[:, None]
            self.impurity = g.class_impurity(targets, n)
            # Score rounding: the engine's gini score is sum(c^2)/n per child (exact
            # integer sums, two roundings), scikit-learn's n_child * (1 - sum(c^2) /
            # n_child^2) summed over the children: a few ulps of n each. Entropy adds a
            # rounded logarithm per class and child. 64 ulps of n per class bound both.
            k = max(g.n_classes, 2)
            scale = n if g.criterion == "gini" else n * (math.log(k) + 1.0)
            tolerance = 64 * EPS * scale * k
            # class counts are exact: scikit-learn's impurity is exactly 0 on a pure node
            self.attempt = could_split & (self.impurity > _EPSILON)
        else:
            total, sum_sq, low, high = targets.T
            self.values = (total / n)[:, None]
            # exact sums: scikit-learn's own formula gives its very impurity; otherwise the
            # engine's two-pass variance (equal to rounding)
            self.impurity = sum_sq / n - (total / n) ** 2 if g.exact_scores else table[:, _IMPURITY]
            # Score rounding: each child's target sum is accumulated in another order by
            # each side, an error of at most n * eps * sum|y| per sum; squared and divided
            # by the child size, by Cauchy-Schwarz at most 2 n eps sum(y^2) per child:
            # 16 n eps sum(y^2) bounds the difference of two scores of one node.
            tolerance = 16 * EPS * n * sum_sq + 1e-300
            self.attempt = self._regression_attempts(g, could_split, low, high, sum_sq)
        gap = table[:, _PROXY] - table[:, _RUNNER_UP]
        self.tied = internal & ~(gap > tolerance)
        clear = internal & ~self.tied
        # scikit-learn compares float32 values promoted to double, FEATURE_THRESHOLD added
        if not np.all(table[clear, _HIGH] > table[clear, _LOW] + _FEATURE_THRESHOLD):
            raise Unsupported("a split between values closer than scikit-learn's 1e-7")
        if self.tied.any() and not g.exact_scores:
            raise Unsupported("tied splits whose rounded scores scikit-learn orders its own way")
        # each node's samples: sorted by the preorder rank of their leaf, a node's samples
        # are one contiguous range, its left child's first
        order = _preorder(table)
        rank = np.empty(len(table), dtype=np.int64)
        rank[order] = np.arange(len(table))
        leaf_rank = rank[_leaves(table, X)]
        self.samples = members[np.argsort(leaf_rank, kind="stable")]
        per_rank = np.bincount(leaf_rank, minlength=len(table))
        self.begin = np.concatenate([[0], np.cumsum(per_rank)])[rank]

    @staticmethod
    def _leaf(g, y):
        table = np.full((1, 9), np.nan)
        table[0, [_FEATURE, _LEFT, _N]] = [-1, -1, len(y)]
        if g.classifier:
            targets = np.bincount(y.astype(np.int64), minlength=g.n_classes)[None, :] * 1.0
            table[0, _IMPURITY] = 0.0
        else:
            mean = y.sum() / len(y)
            table[0, _IMPURITY] = np.mean((y - mean) ** 2)
            targets = np.array([[y.sum(), np.dot(y, y), y.min(), y.max()]])
        return table, targets

    def _regression_attempts(self, g, could_split, low, high, sum_sq):
        """Whether scikit-learn tries to split each node (its rounded impurity above
        EPSILON) exactly where the engine's exact variance says so; Unsupported where
        rounding could decide otherwise."""
        n, variance = self.n, self.table[:, _IMPURITY]
        # a child's impurity comes from its parent's sums minus its sibling's: bound the
        # rounding by the parent's size and sum of squares
        parent = np.arange(len(n))
        inner = np.flatnonzero(self.internal)
        children = self.left[inner]
        parent[children] = inner
        parent[children + 1] = inner
        scale = np.maximum(n[parent] * sum_sq[parent], g.root_scale)
        rounding = 8 * EPS * scale / n
        decided = np.abs(variance - _EPSILON) > rounding
        # a constant node is exactly 0 for scikit-learn when its sums are exact
        exact_constant = (low == high) & ((low == 0) | g.exact_scores)
        if not np.all(decided | exact_constant | ~could_split):
            raise Unsupported("a node whose impurity scikit-learn rounds across its EPSILON")
        return could_split & (variance > _EPSILON) & ~exact_constant

    def members(self, node):
        start = self.begin[node]
        return self.samples[start : start + int(self.n[node])]


class _Grower:
    """scikit-learn's depth-first build replayed over engine fits: nodes in scikit-learn's
    order, its feature draws from the same seed, and at a tied split the split scikit-learn
    picks; where that split sends other samples left than the engine's, both children are
    grown again by the engine from their own samples."""

    def __init__(self, X, y, classifier, est, min_split, min_leaf, algorithm):
        self.X, self.y = X, y
        self.classifier = classifier
        self.criterion = est.criterion
        self.max_depth = est.max_depth
        self.min_split, self.min_leaf = min_split, min_leaf
        self.algorithm = algorithm
        # Sums of integer targets whose squares sum below 2^53 are exact in any order:
        # scikit-learn's scores and impurities are then exact functions of the counts and
        # sums, and its ties can be replayed (class counts always are).
        self.exact_scores = classifier or (
            bool(np.all(y == np.round(y))) and float(np.dot(y, y)) < 2.0**53
        )
        self.root_scale = 0.0 if classifier else len(y) * float(np.dot(y, y))

    def class_impurity(self, counts, n):
        """scikit-learn's impurity of class counts ``(..., K)`` over ``n`` samples."""
        if self.criterion == "gini":
            return 1.0 - (counts * counts).sum(axis=-1) / (n * n)
        # scikit-learn's entropy: classes in order, p * log2(p) subtracted one by one
        entropy = np.zeros(np.shape(n))
        for k in range(counts.shape[-1]):
            c = counts[..., k]
            p = np.where(c > 0, c / n, 1.0)
            entropy = np.where(c > 0, entropy - p * _libm_log2(p), entropy)
        return entropy

    def grow(self, seed, n_classes):
        self.n_classes = n_classes
        d = self.X.shape[1]
        features, constant = list(range(d)), [0] * d
        state = seed
        rows, values = [], []  # scikit-learn's nodes, in its order
        # (source, node, parent row, is_left, constants known on entry, depth)
        stack = [(_Source(self, np.arange(len(self.y)), 0), 0, -1, False, 0, 0)]
        max_depth = 0
        while stack:
            src, node, parent, is_left, known, depth = stack.pop()
            me = len(rows)
            if parent >= 0:
                rows[parent][0 if is_left else 1] = me
            max_depth = max(max_depth, depth)
            n = src.n[node]
            row = [_TREE_LEAF, _TREE_LEAF, _TREE_UNDEFINED, float(_TREE_UNDEFINED)]
            row += [src.impurity[node], n, False]
            rows.append(row)
            values.append(src.values[node])
            if not src.attempt[node]:
                continue
            members = src.members(node)
            seg = self.X[members]
            is_constant = (seg.max(axis=0) <= seg.min(axis=0) + _FEATURE_THRESHOLD).tolist()
            visited, n_total, state = _draw_features(features, constant, known, is_constant, state)
            if not src.internal[node]:
                continue
            left = src.left[node]
            feature, threshold = int(src.table[node, _FEATURE]), src.table[node, _THRESHOLD]
            children = [(src, left + 1), (src, left)]
            n_left = src.n[left]
            if src.tied[node]:
                feature, below, above = self._tie_winner(members, visited)
                threshold = below / 2.0 + above / 2.0
                if threshold == above or not np.isfinite(threshold):
                    threshold = below
                goes_left = self.X[members, feature] <= below
                own_left = np.zeros(len(members), dtype=bool)
                own_left[: int(n_left)] = True  # the left child's samples come first
                if not np.array_equal(goes_left, own_left):
                    n_left = goes_left.sum()
                    children = [
                        (_Source(self, members[~goes_left], depth + 1), 0),
                        (_Source(self, members[goes_left], depth + 1), 0),
                    ]
            row[2], row[3] = feature, threshold
            # scikit-learn sends a missing value to the larger child when training had none
            row[6] = bool(n_left > n - n_left)
            (right_src, right), (left_src, left) = children
            stack.append((right_src, right, me, False, n_total, depth + 1))
            stack.append((left_src, left, me, True, n_total, depth + 1))
        return _sklearn_tree(rows, values, self.X.shape[1], n_classes, max_depth)

    def _tie_winner(self, members, visited):
        """The split scikit-learn picks among tied ones: features in its drawn order, the
        first strictly best score by its own arithmetic, as ``(feature, value below,
        value above)``."""
        m, d = len(members), self.X.shape[1]
        Xm = self.X[members]
        order = np.argsort(Xm, axis=0, kind="stable")
        vs = np.take_along_axis(Xm, order, axis=0)
        pos = np.arange(1, m)[:, None]
        valid = (vs[1:] > vs[:-1] + _FEATURE_THRESHOLD) & (pos >= self.min_leaf)
        valid &= pos <= m - self.min_leaf
        ordered_y = self.y[members][order]
        first_best = np.zeros(d, dtype=np.int64)
        feature_best = np.full(d, -np.inf)
        # score the features a few at a time: m x features x classes stays small
        step = max(1, 2_000_000 // (m * (self.n_classes if self.classifier else 1)))
        for lo in range(0, d, step):
            cols = slice(lo, lo + step)
            score = np.where(valid[:, cols], self._scores(ordered_y[:, cols], m), -np.inf)
            first_best[cols] = np.argmax(score, axis=0)  # first position of each best
            feature_best[cols] = score[first_best[cols], np.arange(score.shape[1])]
        best, winner = -np.inf, None
        for f in visited:
            if feature_best[f] > best:
                best, winner = feature_best[f], f
        if winner is None:
            raise Unsupported("a split scikit-learn does not consider")
        p = first_best[winner] + 1
        return winner, vs[p - 1, winner], vs[p, winner]

    def _scores(self, ordered_y, m):
        """scikit-learn's proxy improvement of every split (after position p, rows) of every
        feature (columns), ``ordered_y`` holding the targets sorted by each feature, with
        its own arithmetic."""
        w_l = np.arange(1, m, dtype=np.float64)[:, None]
        w_r = m - w_l
        if not self.classifier:
            sums = np.cumsum(ordered_y, axis=0)
            s_l = sums[:-1]
            s_r = sums[-1] - s_l
            return s_l * s_l / w_l + s_r * s_r / w_r
        onehot = ordered_y.astype(np.int64)[..., None] == np.arange(self.n_classes)
        cum = np.cumsum(onehot, axis=0, dtype=np.float64)
        c_l = cum[:-1]
        c_r = cum[-1] - c_l
        imp_l = self.class_impurity(c_l, w_l)
        imp_r = self.class_impurity(c_r, w_r)
        return -w_r * imp_r - w_l * imp_l


def _draw_features(features, constant, n_known, is_constant, state):
    """scikit-learn's best splitter's feature draw at one node (Fisher-Yates over the
    features not known constant, constants found on the way set aside), on its shared
    ``features`` / ``constant_features`` arrays. Returns the non-constant features in the
    order visited, the constant count handed to the children, and the new state."""
    d = len(features)
    f_i = d
    n_drawn = n_found = n_visited = 0
    n_total = n_known
    visited = []
    while f_i > n_total and (n_visited < d or n_visited <= n_found + n_drawn):
        n_visited += 1
        f_j, state = _rand_int(n_drawn, f_i - n_found, state)
        if f_j < n_known:
            features[n_drawn], features[f_j] = features[f_j], features[n_drawn]
            n_drawn += 1
            continue
        f_j += n_found
        f = features[f_j]
        if is_constant[f]:
            features[f_j], features[n_total] = features[n_total], features[f_j]
            n_found += 1
            n_total += 1
            continue
        f_i -= 1
        features[f_i], features[f_j] = features[f_j], features[f_i]
        visited.append(f)
    features[:n_known] = constant[:n_known]
    constant[n_known : n_known + n_found] = features[n_known : n_known + n_found]
    return visited, n_total, state


def _preorder(table):
    """Flat node ids in scikit-learn's order: depth first, left child first."""
    left_of = table[:, _LEFT].astype(np.int64).tolist()
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left_of[node] >= 0:
            stack.append(left_of[node] + 1)
            stack.append(left_of[node])
    return np.asarray(order, dtype=np.int64)


def _leaves(table, X):
    """The engine's leaf of every row of ``X`` (``x <= threshold`` goes left)."""
    feature = table[:, _FEATURE].astype(np.int64)
    threshold = table[:, _THRESHOLD]
    left = table[:, _LEFT].astype(np.int64)
    node = np.zeros(len(X), dtype=np.int64)
    rows = np.arange(len(X))
    while True:
        f = feature[node]
        inner = f >= 0
        if not inner.any():
            return node
        r, nd = rows[inner], node[inner]
        goes_right = X[r, f[inner]] > threshold[nd]
        node[inner] = left[nd] + goes_right


def _depths(table):
    depth = np.zeros(len(table), dtype=np.int64)
    for i in range(len(table)):  # children come after their parent
        left = int(table[i, _LEFT])
        if left >= 0:
            depth[left] = depth[left + 1] = depth[i] + 1
    return depth


def _sklearn_tree(rows, values, n_features, n_classes, max_depth):
    """scikit-learn's Tree from its nodes in its order (every sample weighing one)."""
    names = (
        "left_child",
        "right_child",
        "feature",
        "threshold",
        "impurity",
        "n_node_samples",
        "missing_go_to_left",
    )
    columns = dict(zip(names, zip(*rows)))
    columns["weighted_n_node_samples"] = columns["n_node_samples"]
    return tree_from_columns(columns, values, n_features, n_classes, max_depth)


def tree_from_columns(columns, values, n_features, n_classes, max_depth):
    """scikit-learn's Tree from one array (or sequence) per node field, nodes in its order."""
    nodes = np.zeros(len(columns["left_child"]), dtype=NODE_DTYPE)
    for name, col in columns.items():
        nodes[name] = col
    tree = Tree(n_features, np.array([n_classes], dtype=np.intp), 1)
    tree.__setstate__(
        {
            "max_depth": int(max_depth),
            "node_count": len(nodes),
            "nodes": nodes,
            "values": np.ascontiguousarray(np.asarray(values).reshape(len(nodes), 1, n_classes)),
        }
    )
    return tree


class DecisionTreeClassifier(_SkDecisionTreeClassifier):
    __doc__ = _SkDecisionTreeClassifier.__doc__

    @native_path(_SkDecisionTreeClassifier.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=True)


class DecisionTreeRegressor(_SkDecisionTreeRegressor):
    __doc__ = _SkDecisionTreeRegressor.__doc__

    @native_path(_SkDecisionTreeRegressor.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=False)
