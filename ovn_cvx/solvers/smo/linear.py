"""Dual coordinate descent for linear problems (liblinear's method, Hsieh et al. ICML 2008, with the OvN dual's
equal class masses), certified by the proven bound of docs/theory.md §6.

The dual: maximize D(μ) = Σ_p μ_p − ½ tr(P⁺ VᵀV) [− m²/(4γ)] over 0 ≤ μ_p ≤ c_p with equal class masses
m_1 = … = m_K = m (V = XᵀM, M = Y∘μ). A single coordinate cannot move without breaking the masses, so the moves are

* pair steps inside a class: raise one pair's signed variable a_p = y_p μ_p and lower another's by the same amount,
  the class mass kept — O(nnz(x_i) + nnz(x_j)) with V maintained;
* mass steps: one pair per class moved by the same δ, every class mass with it (m is free for hard b, penalised by
  m²/(4γ) for soft b, fixed at 0 for soft b with γ = 0).

Each epoch visits the active pairs in a random order; a visited pair is stepped against its class's *anchor* on the
other side (the pair that can rise with the largest v_p = y_p − x_iᵀw_k, or that can fall with the smallest, as last
seen), and every few visits a mass step moves the anchors of all classes. Epochs start from exact values on the
active pairs, from which the anchors are reset and pairs at a bound that cannot take part in a violating pair are
shrunk (liblinear's shrinking). When the largest violation falls below the epoch tolerance, or every
``check_every`` epochs, the check: V recomputed from the dual, every pair's value, b from each class's KKT interval
shifted onto the hard constraint, F(W, b), and D of the exactly feasible dual point (``duality.feasible_dual``): the
relative bound (F − D)/max(1, |F|) ≤ ``gap_tol`` is the only way to "optimal".
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..._validation import check_instance, check_number
from ...duality import GapBound, dual_value, feasible_dual, project_hard_constraints
from ...objective import objective
from ...problem import Problem
from ...result import SolveResult
from ..mm import _verdict, blas_controller, solve_mm
from . import _linear_loops as loops

#: the requested accuracy: the fast solver's default, one definition
GAP_TOL = solve_mm.__kwdefaults__["gap_tol"]
#: the first round tolerance on a violation (liblinear's default ε on the projected gradient), divided by
#: TOL_FACTOR whenever the largest violation of all pairs falls below it
FIRST_TOL = 0.1
TOL_FACTOR = 10.0
#: the round tolerance's floor, relative to the largest |v|: below it a step changes nothing representable
TOL_FLOOR = 1e-14
#: per class, the rising and the falling pairs of a working set
WORKING_SET = 64
#: the subproblem's step budget per pair of its working set
STEPS_PER_PAIR = 50
#: the number of kernel compilations this process has timed (the first solve reports numba's compile time)
_COMPILED = []


def _check_options(problem, gap_tol, max_iter, check_every, working_set):
    check_instance("problem", problem, Problem)
    if problem.is_kernel:
        raise ValueError(f"problem must be linear (kernel='linear') for the dual decomposition, got kernel="
                         f"{problem.kernel!r}")
    return (check_number("gap_tol", gap_tol, low=0, strict=True),
            check_number("max_iter", max_iter, low=1, integer=True),
            check_number("check_every", check_every, low=1, integer=True),
            check_number("working_set", working_set, low=1, integer=True))


def _warm_dual(problem: Problem, warm_start) -> np.ndarray | None:
    """The signed dual M (N×K) of ``warm_start``: a SolveResult's dual point, or the matrix itself."""
    if warm_start is None:
        return None
    if isinstance(warm_start, SolveResult):
        dual = getattr(warm_start, "dual", None)
        if dual is None:
            dual = warm_start.info.get("dual")  # typed field after merge
        if dual is None:
            raise ValueError(f"warm_start holds no dual point (a {warm_start.method!r} result without one); pass "
                             "a result of method='smo' or the dual matrix M = Y∘μ")
        warm_start = dual
    try:
        M = np.asarray(warm_start, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"warm_start must be a SolveResult or the dual matrix M = Y∘μ, got "
                        f"{type(warm_start).__name__}") from err
    shape = (problem.n_samples, problem.n_classes)
    if M.shape != shape:
        raise ValueError(f"warm_start's dual must have shape {shape} (N, K), got {M.shape}")
    if not np.isfinite(M).all():
        raise ValueError("warm_start's dual has non-finite entries (NaN or inf)")
    return M


class _Dual:
    """The dual state: signed pair variables a_p = y_p μ_p in [lower_p, upper_p], V = XᵀM (M×K) and the common class
    mass m, with P⁺ = c1 I + c2 11ᵀ."""

    def __init__(self, problem: Problem, M: np.ndarray | None):
        self.problem = problem
        pairs, c = problem.pairs, problem.cost
        self.sample, self.label, self.sign = pairs.sample, pairs.label, pairs.sign
        self.bounds = pairs.class_bounds(problem.n_classes)
        self.lower = np.where(self.sign > 0, 0.0, -c)
        self.upper = np.where(self.sign > 0, c, 0.0)
        pinv = problem.coupling_pinv
        self.c2 = float(pinv[0, 1])
        self.c1 = float(pinv[0, 0]) - self.c2
        if problem.hard_b:
            self.inv2g, self.mass_free = 0.0, True
        else:
            self.mass_free = problem.bias_penalty > 0
            self.inv2g = 0.5 / problem.bias_penalty if self.mass_free else 0.0
        mu = np.zeros(len(pairs)) if M is None else feasible_dual(problem, self.sign * M[pairs.sample, pairs.label])
        self.a = self.sign * mu
        self.recompute()

    @property
    def mu(self) -> np.ndarray:
        return np.maximum(self.sign * self.a, 0.0)

    def matrix(self, a, rows=None, label=None) -> np.ndarray:
        """The N×K matrix of pair values ``a`` (or the q×K one of a working set, row r holding its pair r)."""
        if rows is None:
            M = np.zeros((self.problem.n_samples, self.problem.n_classes))
            M[self.sample, self.label] = a
        else:
            M = np.zeros((rows.size, self.problem.n_classes))
            M[np.arange(rows.size), label] = a
        return M

    def recompute(self):
        """V = XᵀM and m exactly from the dual (clearing the updates' drift)."""
        self.V = np.asarray(self.problem.X.T @ self.matrix(self.a))
        self.mass = float(self.a[self.bounds[0]:self.bounds[1]].sum())

    def weights(self) -> np.ndarray:
        """W = XᵀM P⁺ (M×K)."""
        return self.c1 * self.V + self.c2 * self.V.sum(axis=1, keepdims=True)

    def values(self, W) -> np.ndarray:
        """v_p = y_p − x_{i_p}ᵀ w_{k_p} of every pair: the bias that would put it on its margin."""
        return self.sign - (self.problem.X @ W)[self.sample, self.label]

    def working_set(self, v, size) -> np.ndarray:
        """Per class, the ``size`` pairs that can rise with the largest v and the ``size`` that can fall with the
        smallest (the most violating directions of a first-order selection)."""
        chosen = []
        for k in range(self.problem.n_classes):
            s = slice(self.bounds[k], self.bounds[k + 1])
            for key in (np.where(self.a[s] < self.upper[s], -v[s], np.inf),
                        np.where(self.a[s] > self.lower[s], v[s], np.inf)):
                take = min(size, key.size)
                best = np.argpartition(key, take - 1)[:take]
                chosen.append(self.bounds[k] + best[np.isfinite(key[best])])
        return np.unique(np.concatenate(chosen))

    def solve_subproblem(self, S, v, tol, max_steps):
        """SMO on the working set S, then V and m follow its change: (steps, violation left in S)."""
        X, rows, label = self.problem.X, self.sample[S], self.label[S]
        XS = X[rows]
        G = XS @ XS.T
        G = G.toarray() if sp.issparse(G) else G  # q×q: the working set's Gram block
        a = self.a[S]
        new = a.copy()
        steps, self.mass, violation = loops.subproblem(
            G, label, new, self.lower[S], self.upper[S], v[S].copy(), self.problem.n_classes, self.c1, self.c2,
            self.mass, self.inv2g, self.mass_free, tol, max_steps)
        self.a[S] = new
        self.V += np.asarray(XS.T @ self.matrix(new - a, rows, label))
        return steps, violation


def _violation(dual: _Dual, v) -> tuple[float, np.ndarray, np.ndarray]:
    """(the largest violation, each class's top rising value, its bottom falling one): inside a class (top above
    bottom) or of the common mass (Σ_k top_k − m/(2γ) > 0, Σ_k bottom_k − m/(2γ) < 0)."""
    K = dual.problem.n_classes
    rise, fall = loops.extremes(dual.label, dual.a, dual.lower, dual.upper, v, K)
    top = np.where(rise >= 0, v[rise], -np.inf)
    bottom = np.where(fall >= 0, v[fall], np.inf)
    worst = float(np.max(top - bottom, initial=0.0))
    if dual.mass_free:
        offset = dual.mass * dual.inv2g
        worst = max(worst, top.sum() - offset, offset - bottom.sum())
    return worst, top, bottom


def _bias(dual: _Dual, top, bottom) -> np.ndarray:
    """The biases: inside each class's KKT interval [top_k, bottom_k] (where it is empty, its middle), their sum
    moved onto the hard constraint (0) or the soft one's optimum m/(2γ) as far as the intervals allow, the rest spread
    evenly."""
    lo = np.where(np.isfinite(top), top, bottom)
    hi = np.where(np.isfinite(bottom), bottom, top)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    if not dual.problem.hard_b and not dual.mass_free:
        return 0.5 * (lo + hi)  # soft b with γ = 0: Σ b is free
    target = dual.mass * dual.inv2g
    width = float((hi - lo).sum())
    theta = np.clip((target - lo.sum()) / width, 0.0, 1.0) if width > 0 else 0.5
    b = lo + theta * (hi - lo)
    return b + (target - b.sum()) / b.size


def _check(dual: _Dual):
    """(W, b, bound, feasible μ) at the current dual point: V recomputed, W = XᵀMP⁺ on the hard constraint, b from
    the KKT intervals, F(W, b) and D of the dual point made exactly feasible."""
    problem = dual.problem
    dual.recompute()
    W, _ = project_hard_constraints(problem, dual.weights(), np.zeros(problem.n_classes))
    decision = (problem.X @ W)[dual.sample, dual.label]
    _, top, bottom = _violation(dual, dual.sign - decision)
    b = _bias(dual, top, bottom)
    if problem.hard_b:
        b = b - b.mean()
    primal = objective(problem, W, b, residual=1.0 - dual.sign * (decision + b[dual.label]))
    mu = feasible_dual(problem, dual.mu)
    return W, b, GapBound(primal=primal, dual=dual_value(problem, mu)), mu


def _compile_time() -> float:
    """Seconds spent compiling (or loading from numba's disk cache) the loop, on a tiny subproblem, once per
    process."""
    if _COMPILED:
        return 0.0
    start = time.perf_counter()
    two = np.ones(2)
    loops.subproblem(np.eye(2), np.zeros(2, np.int64), np.zeros(2), np.zeros(2), two, two, 1, 1.0, 0.0, 0.0, 0.0,
                     True, 0.1, 10)
    _COMPILED.append(True)
    return time.perf_counter() - start


def solve_linear(problem: Problem, *, gap_tol: float = GAP_TOL, max_iter: int = 10000, warm_start=None,
                 working_set: int = WORKING_SET, check_every: int = 10) -> SolveResult:
    """Solve a linear ``problem`` (dense or sparse X, never densified) by dual decomposition, certified.

    Parameters
    ----------
    gap_tol : float > 0
        The requested accuracy: ``status`` is "optimal" (``success``) only when the proven bound F − D(μ) on F − F*
        (docs/theory.md §6) is ≤ gap_tol·max(1, |F|); otherwise "max_iter", with the bound in ``info["gap_bound"]``.
    max_iter : int > 0
        The budget in rounds (one working set each).
    warm_start : SolveResult or array of shape (N, K), optional
        A previous result of this solver (its dual point) or a dual matrix M = Y∘μ, of a problem with the same
        pairs (a neighbouring β, α, γ or variant): made dual feasible (clipped to the new box, the class masses
        equalized) and continued from.
    working_set : int > 0
        Per class, the number of pairs that can rise and of pairs that can fall in each round's working set.
    check_every : int > 0
        Evaluate the bound at least every this many rounds (also whenever the largest violation falls below the
        round tolerance).

    ``info`` holds ``gap_bound``, ``relative_gap_bound``, ``certified``, ``gap_tol``, ``form`` ("dcd"), ``finish``
    ("dcd"), ``dual`` (the signed N×K dual point M = Y∘μ behind the bound, exactly feasible), ``rounds``, ``steps``
    (of the subproblems), ``checks`` and ``violation`` (the largest, at the best check).
    """
    gap_tol, max_iter, check_every, working_set = _check_options(problem, gap_tol, max_iter, check_every,
                                                                 working_set)
    M = _warm_dual(problem, warm_start)
    start = time.perf_counter()
    compile_time = _compile_time()
    with blas_controller().limit(limits=1, user_api="blas"):
        result = _run(_Dual(problem, M), gap_tol, max_iter, check_every, working_set)
    result.compile_time = compile_time
    result.solve_time = time.perf_counter() - start
    return result


def _run(dual: _Dual, gap_tol, max_iter, check_every, size) -> SolveResult:
    tol, rounds, steps, checks, since, best = FIRST_TOL, 0, 0, 0, 0, None
    while True:
        v = dual.values(dual.weights())
        violation = _violation(dual, v)[0]
        if violation <= tol or since >= check_every or rounds >= max_iter:
            W, b, bound, mu = _check(dual)
            checks, since = checks + 1, 0
            if best is None or bound.relative <= best[2].relative:
                best = (W, b, bound, mu, violation)
            if bound.relative <= gap_tol or rounds >= max_iter:
                break
            if violation <= tol:
                tol = max(tol / TOL_FACTOR, TOL_FLOOR * max(1.0, float(np.abs(v).max(initial=0.0))))
                continue
        S = dual.working_set(v, size)
        taken, _ = dual.solve_subproblem(S, v, tol, STEPS_PER_PAIR * S.size)
        steps += taken
        rounds += 1
        since += 1
    W, b, bound, mu, violation = best
    status = _verdict(bound, gap_tol, hit_limit=True)
    info = {"gap_bound": bound.absolute, "relative_gap_bound": bound.relative, "certified": status == "optimal",
            "gap_tol": gap_tol, "form": "dcd", "finish": "dcd", "dual": dual.matrix(dual.sign * mu),
            "rounds": rounds, "steps": steps, "checks": checks, "violation": violation}
    return SolveResult(problem=dual.problem, coef=W, b=b, objective=bound.primal, status=status, method="smo",
                       solver="SMO-dcd", solve_time=0.0, iterations=rounds, info=info)
