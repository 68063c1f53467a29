"""The proven bound on F − F* (docs/theory.md §6, weak duality), shared by every solver and by the KKT certificate.

For any pair multipliers μ with 0 ≤ μ_p ≤ c_p and equal class masses m_k = Σ_{p: k_p = k} y_p μ_p = m,

    D(μ) = Σ_p μ_p − ½ tr(P⁺ Mᵀ G M) [− m²/(4γ) for soft b]  ≤  F*,

so F(W, b) − D(μ) bounds F(W, b) − F* for every feasible (W, b), whatever produced μ. :func:`feasible_dual`
turns any candidate μ (the slopes of a smoothed hinge, an interior-point iterate, recovered multipliers) into
such a point: clip to the box, then move every class's mass to one common value inside the box.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .objective import constraint_violation, objective
from .problem import Problem, class_sums

EPS = np.finfo(np.float64).eps


@dataclass(frozen=True)
class GapBound:
    """F at the primal point, D at the feasible dual point, and the bound F − D ≥ F − F* (≥ 0 up to round-off).

    ``relative`` is the bound over max(1, |F|), the scale of every accuracy statement in the package. ``mu``: the
    dual-feasible multipliers D was evaluated at (None when not kept).

    Parameters
    ----------
    primal : float
        F at the primal point.
    dual : float
        D at the feasible dual point.
    mu : ndarray of shape (n_pairs,) or None, default=None
        The dual-feasible multipliers D was evaluated at; None when not kept.

    Examples
    --------
    >>> from ovn_cvx.duality import GapBound
    >>> bound = GapBound(primal=10.5, dual=10.0)
    >>> bound.absolute, round(bound.relative, 4)    # F - D, and over max(1, |F|)
    (0.5, 0.0476)
    """

    primal: float
    dual: float
    mu: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def absolute(self) -> float:
        return max(self.primal - self.dual, 0.0)

    @property
    def relative(self) -> float:
        return self.absolute / max(1.0, abs(self.primal))


def class_masses(problem: Problem, mu: np.ndarray, bounds: np.ndarray | None = None) -> np.ndarray:
    """The class masses m_k = Σ_{p: k_p = k} y_p μ_p of pair multipliers μ (docs/theory.md §6): a dual-feasible μ
    has them all equal.

    Parameters
    ----------
    problem : Problem
        The training problem.
    mu : ndarray of shape (n_pairs,)
        Pair multipliers, in the order of ``problem.pairs``.
    bounds : ndarray of shape (n_classes + 1,), optional
        The pairs' class bounds (``problem.pairs.class_bounds(problem.n_classes)``), when already known.

    Returns
    -------
    ndarray of shape (n_classes,)
        The class masses.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import class_masses, feasible_dual
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, beta=1.0)
    >>> class_masses(problem, np.full(30, 0.5))            # ten positive pairs a class
    array([5., 5., 5.])
    >>> mu = feasible_dual(problem, np.linspace(0.0, 1.0, 30))
    >>> bool(np.ptp(class_masses(problem, mu)) <= 1e-12)  # one common mass
    True
    """
    if bounds is None:
        bounds = problem.pairs.class_bounds(problem.n_classes)
    return class_sums(problem.pairs.sign * mu, bounds)


def _common_mass(problem: Problem, mass: np.ndarray, lowest: np.ndarray, highest: np.ndarray) -> float:
    """The class mass every class is moved to: the smallest one (moving down only removes weight), kept inside
    every class's reachable range [lowest_k, highest_k] (which all contain 0); 0 when the soft-b penalty is 0
    (b free: its stationarity forces m = 0)."""
    if not problem.hard_b and problem.bias_penalty == 0:
        return 0.0
    return float(np.clip(mass.min(), lowest.max(), highest.min()))


def _shift_mass(mu, c, sign, delta):
    """Change Σ sign·μ of one class by ``delta`` inside the box: first release weight from the pairs whose sign
    works against the change, then add weight to the others, each proportionally to what it can give."""
    against = sign < 0 if delta > 0 else sign > 0
    # products with the masks rather than boolean indexing, which gathers and scatters (measured 4× slower)
    release = float(mu @ against)
    if release >= abs(delta):  # the release covers the change: the other pairs keep their weight (and zeros)
        if delta != 0:
            mu *= np.where(against, 1.0 - abs(delta) / release, 1.0)
        return mu
    mu *= ~against
    rest = abs(delta) - release
    room = (c - mu) * ~against
    if rest > 0 and room.sum() > 0:
        mu += room * min(1.0, rest / room.sum())
    return mu


def feasible_dual(problem: Problem, mu) -> np.ndarray:
    """μ clipped to [0, c] with every class mass moved to one common value, inside the box (docs/theory.md §6).

    Parameters
    ----------
    problem : Problem
        The training problem.
    mu : array-like of shape (n_pairs,)
        Candidate pair multipliers, in the order of ``problem.pairs`` (NaN counts as 0).

    Returns
    -------
    ndarray of shape (n_pairs,)
        The dual-feasible multipliers.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import feasible_dual
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, beta=1.0)
    >>> mu = feasible_dual(problem, np.linspace(-1.0, 3.0, 30))   # any candidate: clipped into the box [0, c]
    >>> bool(mu.min() >= 0 and (mu <= problem.cost).all())
    True
    """
    pairs, c = problem.pairs, problem.cost
    mu = np.clip(np.nan_to_num(np.asarray(mu, dtype=np.float64), nan=0.0), 0.0, c)
    positive = pairs.sign > 0
    bounds = pairs.class_bounds(problem.n_classes)
    highest = class_sums(np.where(positive, c, 0.0), bounds)
    lowest = -class_sums(np.where(positive, 0.0, c), bounds)
    mass = class_masses(problem, mu, bounds)
    target = _common_mass(problem, mass, lowest, highest)
    for k in np.flatnonzero(mass != target):
        s = slice(bounds[k], bounds[k + 1])
        mu[s] = _shift_mass(mu[s], c[s], pairs.sign[s], target - mass[k])
    return mu


def dual_value(problem: Problem, mu: np.ndarray) -> float:
    """D(μ) = Σ_p μ_p − ½ tr(P⁺ Mᵀ G M) [− m²/(4γ)] for a dual-feasible μ (docs/theory.md §6), with the exact G (X Xᵀ
    for linear problems, never formed), so that the bound holds for the problem as stated — less a bound on the
    round-off of computing it (docs/theory.md §6, "Round-off"), which P⁺ amplifies near either end of α's interval.

    Parameters
    ----------
    problem : Problem
        The training problem.
    mu : ndarray of shape (n_pairs,)
        Dual-feasible pair multipliers, in the order of ``problem.pairs``.

    Returns
    -------
    float
        The dual value D(μ), less the bound on its round-off.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import dual_value, feasible_dual
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> D = dual_value(problem, feasible_dual(problem, np.full(30, 0.5)))
    >>> bool(D <= result.objective)                 # weak duality: every D(mu) is a lower bound on F*
    True
    """
    pairs, K = problem.pairs, problem.n_classes
    nonzero = np.flatnonzero(mu)
    support, row = support_index(problem.n_samples, pairs.sample[nonzero])
    M = np.bincount(row * K + pairs.label[nonzero], weights=pairs.sign[nonzero] * mu[nonzero],
                    minlength=support.size * K).reshape(support.size, K)
    # P⁺ = Π/(1−α) + (J/K)/(1+(K−1)α) (soft w) or Π (hard w): the centred and the mean part of M separately, each a
    # sum of squares, never a difference of two large numbers (features of scale 1e6 put ~1e9 in both classes'
    # columns of XᵀM, and their difference is what counts); each row of a part within `slack` of the exact one.
    # Row sums as products with ones: numpy's reductions along rows of K entries measured 5–10× slower
    coupling, ones = problem.coupling_ops, np.ones(K)
    magnitude, row_sum = np.abs(M) @ ones, M @ ones
    parts = [(M - (row_sum / K)[:, None], 1.0 / coupling.centred, (K + 1) * EPS * magnitude)]
    if not problem.hard_w:
        parts.append((row_sum[:, None], 1.0 / (K * coupling.mean), K * EPS * magnitude))
    if problem.is_kernel:
        block = problem.gram[np.ix_(support, support)]
    else:  # every sample in the support (an interior iterate's): X itself, no copy
        block = (problem.X if support.size == problem.n_samples else problem.X[support]).T
    quadratic = error = 0.0
    for (_, weight, _), (value, value_error) in zip(parts, _quadratics(block, parts, problem)):
        quadratic += weight * value
        error += weight * value_error
    total = float(mu.sum())
    value = total - 0.5 * quadratic
    error = 0.5 * error + EPS * (mu.size * total + 0.5 * quadratic)
    if not problem.hard_b and problem.bias_penalty > 0:
        m = float(class_masses(problem, mu).mean())
        m_error = mu.size * EPS * total
        value -= m * m / (4.0 * problem.bias_penalty)
        error += (2.0 * abs(m) * m_error + m_error * m_error + EPS * m * m) / (4.0 * problem.bias_penalty)
    return value - error


def support_index(n_samples: int, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``samples`` in increasing order and each entry's index among them: what ``np.unique`` with
    ``return_inverse`` gives, by a mask over the samples instead of a sort (measured on the small one-vs-rest label
    matrices, μ nonzero on half the pairs: 35 instead of 74 µs a call, several calls a polish round).

    Parameters
    ----------
    n_samples : int
        The number of samples N.
    samples : ndarray of int of shape (n,)
        Sample indices in [0, N), in any order, repeats allowed (the samples of a dual point's nonzero pairs).

    Returns
    -------
    support : ndarray of int
        The distinct samples, increasing.
    index : ndarray of int of shape (n,)
        Each entry's position in ``support``: ``support[index]`` is ``samples``.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.duality import support_index
    >>> support_index(6, np.array([4, 1, 4, 2]))
    (array([1, 2, 4]), array([2, 0, 2, 1]))
    """
    present = np.zeros(n_samples, dtype=bool)
    present[samples] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[samples]


def _quadratics(block, parts, problem: Problem) -> list[tuple[float, float]]:
    """(q, e) for every (part, weight, slack) of ``parts``: q as computed — Σ(Bp)² for linear problems (B = X_Sᵀ),
    Σ p∘(Gp) for kernel ones (G = G_SS) — and e ≥ |q − q*|, q* the same quantity of the exact part p*, whose rows
    differ from ``part`` by at most ``slack``. The product's own rounding is bounded by n·eps·|B||p| (n terms per
    entry), the sums of squares' by their number of terms times eps: the standard worst-case bounds, whatever the
    summation order. All parts share the passes over the block (a kernel evaluated by blocks costs one evaluation a
    pass); a Gaussian block is its own absolute value, so its bound rides on the same pass."""
    n = block.shape[1]
    stacked = np.hstack([part for part, _, _ in parts])
    ends = np.cumsum([part.shape[1] for part, _, _ in parts])[:-1]
    if not problem.is_kernel:
        reaches = abs(block) @ np.hstack([slack[:, None] + n * EPS * np.abs(part) for part, _, slack in parts])
        out = []
        for product, reach in zip(np.hsplit(block @ stacked, ends), np.hsplit(reaches, ends)):
            value = float(np.sum(product * product))  # bounds |computed Bp̂ − Bp*| entrywise: reach
            out.append((value, float(np.sum(reach * (2.0 * np.abs(product) + reach)) + product.size * EPS * value)))
        return out
    # p̂ᵀGp̂ − p*ᵀGp* = 2δᵀGp̂ − δᵀGδ with |δ| ≤ slack, and Gp̂ computed within n·eps·|G||p̂|
    slacks = np.column_stack([slack for _, _, slack in parts])  # one column a part: δ's columns are all equal
    magnitudes = np.hstack([np.abs(stacked), slacks])
    if problem.nonnegative_gram:
        products, reaches = np.hsplit(block @ np.hstack([stacked, magnitudes]), [stacked.shape[1]])
    else:
        products, reaches = block @ stacked, abs(block) @ magnitudes
    of_parts, of_slacks = np.hsplit(reaches, [stacked.shape[1]])  # |G||p̂| and |G|δ
    out = []
    for j, ((part, _, slack), product, of_part) in enumerate(zip(parts, np.hsplit(products, ends),
                                                                np.hsplit(of_parts, ends))):
        value = float(np.sum(part * product))
        delta = slack[:, None]
        out.append((value, float(n * EPS * np.sum(np.abs(part) * of_part)
                                 + part.shape[1] * np.sum(slack * of_slacks[:, j])
                                 + 2.0 * np.sum(delta * (np.abs(product) + n * EPS * of_part))
                                 + part.size * EPS * np.sum(np.abs(part * product)))))
    return out


def gap_bound(problem: Problem, coef, b, mu, *, primal: float | None = None) -> GapBound:
    """The proven bound of (coef, b) from the candidate multipliers ``mu`` (made feasible first).

    ``primal``: F(coef, b) when the caller has just evaluated it. The hard constraints of (coef, b) must hold
    (to round-off): the bound is about the feasible set.

    Parameters
    ----------
    problem : Problem
        The training problem.
    coef : array-like of shape (M, K) or (N, K)
        W (linear formulation) or A (kernel formulation).
    b : array-like of shape (K,)
        The biases.
    mu : array-like of shape (n_pairs,)
        Candidate pair multipliers, in the order of ``problem.pairs``; made feasible by :func:`feasible_dual`.
    primal : float, optional
        F(coef, b), if already evaluated; None evaluates it.

    Returns
    -------
    GapBound
        The primal value, the dual value and the feasible multipliers.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import gap_bound
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3)
    >>> result = ovn_cvx.solve(problem, method="mm")
    >>> bound = gap_bound(problem, result.coef, result.b, np.full(30, 0.5))   # a rough guess of the multipliers
    >>> round(float(bound.relative), 2)
    0.49
    >>> mu = result.dual[problem.pairs.sample, problem.pairs.label] * problem.pairs.sign   # the solver's own
    >>> bool(gap_bound(problem, result.coef, result.b, mu).relative <= 1e-6)
    True
    """
    if primal is None:
        primal = objective(problem, coef, b)
    mu = feasible_dual(problem, mu)
    return GapBound(primal=float(primal), dual=dual_value(problem, mu), mu=mu)


def signed_dual(problem: Problem, mu: np.ndarray | None) -> np.ndarray | None:
    """The N×K matrix M of the pair multipliers, M_{i_p k_p} = y_p μ_p (docs/theory.md §6); None for None.

    Parameters
    ----------
    problem : Problem
        The training problem.
    mu : ndarray of shape (n_pairs,) or None
        Pair multipliers, in the order of ``problem.pairs``.

    Returns
    -------
    ndarray of shape (N, K) or None
        The matrix M, or None when ``mu`` is None.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import signed_dual
    >>> X = np.random.default_rng(0).normal(size=(6, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, [0, 1, 2, 0, 1, 2])
    >>> signed_dual(problem, np.full(6, 0.5))       # M = Y * mu, one row per pattern
    array([[0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5],
           [0.5, 0. , 0. ],
           [0. , 0.5, 0. ],
           [0. , 0. , 0.5]])
    """
    if mu is None:
        return None
    pairs = problem.pairs
    M = np.zeros((problem.n_samples, problem.n_classes))
    M[pairs.sample, pairs.label] = pairs.sign * mu
    return M


def project_hard_constraints(problem: Problem, coef: np.ndarray, b: np.ndarray):
    """(coef, b) with the variant's hard constraints made exact: Σ_k b_k = 0 and Σ_k w_k = 0 (kernel: the rows
    of A sum to 0) by removing the class mean. A solver's round-off left there would otherwise sit outside the
    feasible set the bound is about.

    Parameters
    ----------
    problem : Problem
        The training problem.
    coef : ndarray of shape (M, K) or (N, K)
        W (linear formulation) or A (kernel formulation).
    b : ndarray of shape (K,)
        The biases.

    Returns
    -------
    coef : ndarray
        The coefficients, their class mean removed for a hard-w variant.
    b : ndarray
        The biases, their mean removed for a hard-b variant.

    Examples
    --------
    >>> import numpy as np, ovn_cvx
    >>> from ovn_cvx.duality import project_hard_constraints
    >>> X = np.random.default_rng(0).normal(size=(30, 2))
    >>> problem = ovn_cvx.Problem.from_labels(X, np.arange(30) % 3, variant="HwHb")
    >>> coef, b = project_hard_constraints(problem, np.ones((2, 3)), np.array([1.0, 2.0, 3.0]))
    >>> b, ovn_cvx.constraint_violation(problem, coef, b)
    (array([-1.,  0.,  1.]), {'sum_b': 0.0, 'sum_w': 0.0})
    """
    violation = constraint_violation(problem, coef, b)
    if "sum_b" in violation:
        b = b - b.mean()
    if "sum_w" in violation:
        coef = coef - coef.mean(axis=1, keepdims=True)
    return coef, b
