"""Dual coordinate descent for linear problems (liblinear's, Hsieh et al. ICML 2008), with the OvN dual's equal class
masses, certified by the proven bound of docs/theory.md §6 (the method: §9.14).

The dual: maximize D(μ) = Σ_p μ_p − ½ tr(P⁺ VᵀV) [− m²/(4γ)] over 0 ≤ μ_p ≤ c_p with equal class masses
m_1 = … = m_K = m (V = XᵀM, M = Y∘μ). A single coordinate cannot move without breaking the masses, so the masses are
handled by the method of multipliers: for fixed multipliers b_k (the biases) each round maximizes the augmented
Lagrangian D − Σ_k b_k (m_k − m) − (ρ/2) Σ_k (m_k − m)² by liblinear's coordinate sweeps (random order, one
coordinate at a time to its box-clipped optimum in O(nnz(x_i)) with V maintained, shrinking), then moves
b_k += ρ (m_k − m). Checks (every few rounds): V recomputed from the dual, W = XᵀMP⁺, b the better of the
multipliers and a point of the classes' KKT intervals (shifted onto the hard constraint), F(W, b), and D of the dual
point made exactly feasible (``duality.feasible_dual``); once the round tolerance is small, the package's
active-set polish (docs/theory.md §9.5) of the margin set the residuals point to. The relative bound
(F − D)/max(1, |F|) ≤ ``gap_tol`` is the only way to "optimal".

Measured (``benchmarks/bench_practical_linear.py``): the hinge loss's coordinate descent has a long tail (liblinear's
own hinge-loss solver needs ~800 sweeps for a projected-gradient tolerance of 0.1 on the benchmark's binary
subproblems), so a proven gap of 1e-6 takes hundreds of rounds where the MM solver's interior point takes a few
iterations; the polish certifies small problems in a few rounds.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..._validation import check_instance, check_number
from ...duality import GapBound, dual_value, feasible_dual, project_hard_constraints
from ...objective import objective
from ...problem import Problem, class_sums
from ...result import SolveResult
from ..._blas import blas_controller
from ..progress import Progress
from ..verdict import GAP_TOL, report_fields, verdict
from ..mm.common import GramOperator
from ..mm.polish import free_parameters, polish
from . import _linear_loops as loops
from .certificate import interval_biases

#: the requested accuracy: the fast solver's default, one definition
#: the first round tolerance on the projected gradients' span (liblinear's default ε), divided by TOL_FACTOR whenever
#: a round converged to it with the class masses within it
FIRST_TOL = 0.1
TOL_FACTOR = 10.0
#: the round tolerance's floor: below it a step changes nothing representable
TOL_FLOOR = 1e-14
#: the default ρ: this fraction of a pair's mean curvature (P⁺)_kk |x_i|². The penalty adds ρ to every coordinate's
#: curvature, so a large ρ shortens every step; a small one slows the biases' multiplier steps. Measured (sweeps to a
#: proven gap of 1e-6 on 13 problems: emotions, scene, dense N = 2 000 and sparse 5 000 / 20 000 × 50 000 sets,
#: SwSb γ = 0 and SwHb, with and without negatives; factors 1, 0.5, 0.1, 0.05, 0.02): 0.05 took 1.0–1.12× the
#: fewest sweeps on each, the mean curvature itself 1.3–2.9× (sparse 20 000: 42 sweeps against 99; dense SwHb with
#: negatives: uncertified in 300 rounds); on 12 more (HwHb α = 0.3 with negatives, SwSb γ = 1 α = 0.5 and HwSb
#: α = −0.1 without) fewer sweeps than the mean curvature on the 11 it certified (emotions HwHb: certified after 3 209
#: sweeps, uncertified after 14 886; scene HwHb neither)
RHO_SCALE = 0.05
#: the smallest default ρ (all-zero rows)
EPS_RHO = 1e-12
#: the polish (the exact finish on the margin set) is attempted at the checks once the round tolerance is this small,
#: at most MAX_POLISHES times
POLISH_TOL = 1e-2
MAX_POLISHES = 10
#: the largest band the polish is given (its dense system of this size: 128 MiB); measured: the sparse 20 000 × 50 000
#: benchmark set's band of 74 303 pairs asked for 41 GiB
POLISH_PAIRS = 4000
#: the index types whose loop this process has compiled or loaded (the first solve of each reports the time)
_COMPILED = []


def _check_options(problem, gap_tol, max_iter, max_sweeps, check_every, rho):
    check_instance("problem", problem, Problem)
    if problem.is_kernel:
        raise ValueError(f"problem must be linear (kernel='linear') for the dual coordinate descent, got kernel="
                         f"{problem.kernel!r}")
    return (check_number("gap_tol", gap_tol, low=0, strict=True),
            check_number("max_iter", max_iter, low=1, integer=True),
            check_number("max_sweeps", max_sweeps, low=1, integer=True),
            check_number("check_every", check_every, low=1, integer=True),
            None if rho is None else check_number("rho", rho, low=0, strict=True))


def _warm_dual(problem: Problem, warm_start) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(M, b): the signed dual (N×K) of ``warm_start`` — a SolveResult's dual point, or the matrix itself — and the
    result's biases (None for a matrix). A result's pairs at the upper bound of its box move to the new box's bound:
    along a β path the errors stay errors."""
    if warm_start is None:
        return None, None
    result = warm_start if isinstance(warm_start, SolveResult) else None
    if result is not None:
        warm_start = getattr(result, "dual", None)
        if warm_start is None:
            warm_start = result.dual
        if warm_start is None:
            raise ValueError(f"warm_start holds no dual point (a {result.method!r} result without one); pass "
                             "a result of method='smo' or the dual matrix M = Y∘μ")
    try:
        M = np.array(warm_start, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"warm_start must be a SolveResult or the dual matrix M = Y∘μ, got "
                        f"{type(warm_start).__name__}") from err
    shape = (problem.n_samples, problem.n_classes)
    if M.shape != shape:
        raise ValueError(f"warm_start's dual must have shape {shape} (N, K), got {M.shape}")
    if not np.isfinite(M).all():
        raise ValueError("warm_start's dual has non-finite entries (NaN or inf)")
    if result is None:
        return M, None
    old, pairs = result.problem, problem.pairs
    if old is not None and np.array_equal(old.Y, problem.Y):
        bounded = pairs.sign * M[pairs.sample, pairs.label] >= old.cost
        M[pairs.sample[bounded], pairs.label[bounded]] = pairs.sign[bounded] * problem.cost[bounded]
    b = None if result.b is None else np.asarray(result.b, dtype=np.float64)
    return M, (b if b is not None and b.shape == (problem.n_classes,) and np.isfinite(b).all() else None)


class _Dual:
    """The dual state in the loop's layout (see ``_linear_loops``), the multipliers b of the class masses and ρ."""

    def __init__(self, problem: Problem, M: np.ndarray | None, bias: np.ndarray | None, rho: float | None):
        self.problem = problem
        X = problem.X
        if sp.issparse(X):
            self.rows = (np.empty((0, 0)), X.data, X.indices, X.indptr)
        else:
            self.rows = (np.ascontiguousarray(X), np.empty(0), np.empty(0, np.int32), np.empty(0, np.int32))
        pairs, c = problem.pairs, problem.cost
        self.sample, self.label, self.sign = pairs.sample, pairs.label, pairs.sign
        self.bounds = pairs.class_bounds(problem.n_classes)
        self.lower = np.where(self.sign > 0, 0.0, -c)
        self.upper = np.where(self.sign > 0, c, 0.0)
        self.sq = loops.row_norms(*self.rows, problem.n_samples)
        pinv = problem.coupling_pinv
        self.c2 = float(pinv[0, 1])
        self.c1 = float(pinv[0, 0]) - self.c2
        if problem.hard_b:
            self.inv2g, self.mass_free = 0.0, True
        else:
            self.mass_free = problem.bias_penalty > 0
            self.inv2g = 0.5 / problem.bias_penalty if self.mass_free else 0.0
        # the mass penalty: a fraction of a coordinate's own curvature, (c1 + c2)|x|², on average
        curvature = (self.c1 + self.c2) * float(self.sq[self.sample].mean())
        self.rho = rho if rho is not None else max(RHO_SCALE * curvature, EPS_RHO)
        mu = np.zeros(len(pairs)) if M is None else feasible_dual(problem, self.sign * M[pairs.sample, pairs.label])
        self.a = self.sign * mu
        # the loop's visiting order of the samples, the pairs of each sample (CSR) and the shrinking marks
        self.order = np.arange(problem.n_samples)
        by_sample = np.argsort(self.sample, kind="stable")
        self.pairs_of = (np.searchsorted(self.sample[by_sample], np.arange(problem.n_samples + 1)), by_sample)
        self.shrunk = np.zeros(len(pairs), dtype=bool)
        self.recompute()
        if bias is None:
            top, bottom = _thresholds(self, self.values())
            bias = self.interval_bias(top, bottom)
        self.bias = bias - bias.mean() if problem.hard_b else bias

    def interval_bias(self, top, bottom) -> np.ndarray:
        """The biases in the classes' KKT intervals [top_k, bottom_k] (:func:`~.certificate.interval_biases`), their
        sum on the hard constraint (0) or the soft one's optimum m/(2γ); free where Σ b is (soft b with γ = 0)."""
        free_sum = not self.problem.hard_b and not self.mass_free
        return interval_biases(top, bottom, None if free_sum else float(self.masses.mean()) * self.inv2g)

    @property
    def mu(self) -> np.ndarray:
        return np.maximum(self.sign * self.a, 0.0)

    def matrix(self, a) -> np.ndarray:
        """The N×K matrix of pair values ``a``."""
        M = np.zeros((self.problem.n_samples, self.problem.n_classes))
        M[self.sample, self.label] = a
        return M

    def recompute(self):
        """V, u and the class masses exactly from the dual (clearing the updates' drift)."""
        self.V = np.ascontiguousarray(np.asarray(self.problem.X.T @ self.matrix(self.a)))
        self.u = self.V.sum(axis=1, keepdims=True)
        self.masses = class_sums(self.a, self.bounds)

    @property
    def mass(self) -> float:
        """The common mass m that the masses are pulled to (its maximizer given b and the masses)."""
        if not self.mass_free:
            return 0.0
        return float((self.bias.sum() + self.rho * self.masses.sum()) / (self.inv2g + self.rho * self.masses.size))

    def weights(self) -> np.ndarray:
        """W = XᵀM P⁺ (M×K)."""
        return self.c1 * self.V + self.c2 * self.u

    def values(self, W=None) -> np.ndarray:
        """v_p = y_p − x_{i_p}ᵀ w_{k_p} of every pair: the bias that would put it on its margin."""
        return self.sign - (self.problem.X @ (self.weights() if W is None else W))[self.sample, self.label]

    def descend(self, tol, max_sweeps, seed):
        """Coordinate ascent for the current b, then b's multiplier step b_k += ρ (m_k − m): (sweeps, the projected
        gradients' span at the end, the step's largest |Δb_k|)."""
        sweeps, span = loops.coordinate_descent(
            *self.rows, self.sq, self.sample, self.label, self.sign, self.lower, self.upper, self.a, self.V, self.u,
            self.c1, self.c2, self.bias, self.masses, self.rho, self.inv2g, self.mass_free, self.order, self.pairs_of,
            self.shrunk, tol, max_sweeps, seed)
        imbalance = self.masses - self.mass
        self.bias = self.bias + self.rho * imbalance
        return sweeps, span, float(self.rho * np.abs(imbalance).max())


def _thresholds(dual: _Dual, v) -> tuple[np.ndarray, np.ndarray]:
    """Each class's top value among the pairs that can rise and bottom value among those that can fall: the ends of
    its KKT interval for b_k (optimal when top ≤ bottom)."""
    starts = dual.bounds[:-1]
    top = np.maximum.reduceat(np.where(dual.a < dual.upper, v, -np.inf), starts)
    bottom = np.minimum.reduceat(np.where(dual.a > dual.lower, v, np.inf), starts)
    return top, bottom


def _check(dual: _Dual):
    """((W, b, bound, feasible μ), residuals) at the current dual point: V recomputed, W = XᵀMP⁺ on the
    hard constraint, b the better (by F) of the multipliers and a point of the KKT intervals, and D of the dual point
    made exactly feasible."""
    problem = dual.problem
    dual.recompute()
    W, _ = project_hard_constraints(problem, dual.weights(), np.zeros(problem.n_classes))
    decision = (problem.X @ W)[dual.sample, dual.label]
    top, bottom = _thresholds(dual, dual.sign - decision)
    candidates = []
    for b in (dual.bias, dual.interval_bias(top, bottom)):
        b = b - b.mean() if problem.hard_b else b
        candidates.append((objective(problem, W, b, residual=1.0 - dual.sign * (decision + b[dual.label])), b))
    primal, b = min(candidates, key=lambda candidate: candidate[0])
    point = _proven(problem, W, b, primal, dual.mu)
    return point, 1.0 - dual.sign * (decision + b[dual.label])


def _proven(problem: Problem, W, b, primal: float, mu) -> tuple:
    """(W, b, the bound, the exactly feasible μ behind it)."""
    mu = feasible_dual(problem, mu)
    return W, b, GapBound(primal=primal, dual=dual_value(problem, mu)), mu


def _polish(problem: Problem, residual, primal: float, tol: float):
    """The package's active-set polish (docs/theory.md §9.5) of the margin set the residuals point to (bands tol and
    10·tol, each only while it holds at most K(M+1) pairs — a non-degenerate optimum's most — and POLISH_PAIRS: the
    polish forms a dense system of the band's size): (W, b, bound, μ) when it certifies, else None."""
    limit = min(free_parameters(problem), POLISH_PAIRS)
    deltas = [delta for delta in (tol, 10.0 * tol) if np.count_nonzero(np.abs(residual) < delta) <= limit]
    if not deltas:
        return None
    outcome = polish(problem, GramOperator(problem), residual, primal, deltas)
    if not outcome.certified:
        return None
    return _proven(problem, outcome.coef, outcome.b, outcome.objective, outcome.mu)


def _compile_time(dual: _Dual) -> float:
    """Seconds spent compiling (or loading from numba's disk cache) the loop for this index type, once per process
    and type (dense data passes empty int32 index arrays, so dense and the usual CSR share one compilation): it runs
    once on no pair."""
    key = (dual.rows[2].dtype, dual.rows[3].dtype)
    if key in _COMPILED:
        return 0.0
    start = time.perf_counter()
    loops.coordinate_descent(*dual.rows, dual.sq, dual.sample, dual.label, dual.sign, dual.lower, dual.upper,
                             dual.a, dual.V, dual.u, dual.c1, dual.c2, dual.bias, dual.masses.copy(), dual.rho,
                             dual.inv2g, dual.mass_free, dual.order[:0].copy(), dual.pairs_of, dual.shrunk, 1.0, 1,
                             0)
    _COMPILED.append(key)
    return time.perf_counter() - start


def solve_linear(problem: Problem, *, gap_tol: float = GAP_TOL, max_iter: int = 1000, max_sweeps: int = 50,
                 check_every: int = 5, warm_start=None, rho: float | None = None, verbose: bool = False
                 ) -> SolveResult:
    """Solve a linear ``problem`` (dense or sparse X, never densified) by dual coordinate descent, certified.

    Parameters
    ----------
    gap_tol : float > 0
        The requested accuracy: ``status`` is "optimal" (``success``) only when the proven bound F − D(μ) on F − F*
        (docs/theory.md §6) is ≤ gap_tol·max(1, |F|); otherwise "max_iter", with the bound in ``gap_bound``.
    max_iter : int > 0
        The budget in rounds: coordinate descent for fixed biases, then the biases' multiplier step and a check.
    max_sweeps : int > 0
        The budget of each round's coordinate descent, in sweeps over the active pairs.
    warm_start : SolveResult or array of shape (N, K), optional
        A previous result of this solver (its dual point) or a dual matrix M = Y∘μ, of a problem with the same
        pairs (a neighbouring β, α, γ or variant): made dual feasible (clipped to the new box, the class masses
        equalized) and continued from.
    check_every : int > 0
        Evaluate the bound (and attempt the polish) every this many rounds, and whenever a round converged to its
        tolerance (which is then divided by 10).
    rho : float > 0, optional
        The penalty on unequal class masses (default: ``RHO_SCALE`` = 0.05 times the mean curvature (P⁺)_kk |x_i|²
        of a pair).
    verbose : bool, default=False
        Progress on stdout, never a line per coordinate step: each round's sweeps so far, the projected gradients'
        span against the round tolerance, the biases' largest multiplier step and the active and shrunk pairs ("dcd
        round"); at each check F, D(μ) and the proven relative bound (F − D)/max(1, |F|) of the best point so far
        ("dcd evaluation": the last one is the result's ``relative_gap_bound``); each polish and whether it
        certified ("dcd polish"). The same rounds and answer as without.

    ``info`` holds ``gap_bound``, ``relative_gap_bound``, ``certified``, ``gap_tol``, ``form`` ("dcd"), ``finish``
    ("dcd", or "dcd + polish" when the polish certified), ``dual`` (the signed N×K dual point M = Y∘μ behind the
    bound, exactly feasible), ``rounds``, ``sweeps``, ``checks``, ``polishes`` and ``rho``.
    """
    gap_tol, max_iter, max_sweeps, check_every, rho = _check_options(problem, gap_tol, max_iter, max_sweeps,
                                                                     check_every, rho)
    M, bias = _warm_dual(problem, warm_start)
    progress = Progress("dcd", verbose)
    start = time.perf_counter()
    with blas_controller().limit(limits=1, user_api="blas"):
        dual = _Dual(problem, M, bias, rho)
        compile_time = _compile_time(dual)
        result = _run(dual, gap_tol, max_iter, max_sweeps, check_every, progress)
    result.compile_time = compile_time
    result.solve_time = time.perf_counter() - start
    progress.done(result)
    return result


def _run(dual: _Dual, gap_tol, max_iter, max_sweeps, check_every, progress: Progress) -> SolveResult:
    tol, rounds, sweeps, polishes, checks, best, finish = FIRST_TOL, 0, 0, 0, 0, None, "dcd"
    while rounds < max_iter:
        taken, span, shift = dual.descend(tol, max_sweeps, rounds)
        sweeps += taken
        rounds += 1
        if progress:
            shrunk = int(np.count_nonzero(dual.shrunk))
            progress("round", rounds, sweeps=sweeps, span=span, tol=tol, bias_step=shift,
                     active_pairs=dual.shrunk.size - shrunk, shrunk_pairs=shrunk)
        settled = span <= tol and shift <= tol
        if not (settled or rounds % check_every == 0 or rounds == max_iter):
            continue
        point, residual = _check(dual)
        checks += 1
        if best is None or point[2].relative <= best[2].relative:
            best = point
        progress.evaluation(checks, best[2], round=rounds)
        if best[2].relative <= gap_tol:
            break
        if tol <= POLISH_TOL and polishes < MAX_POLISHES:
            polishes += 1
            found = _polish(dual.problem, residual, point[2].primal, tol)
            progress("polish", polishes, round=rounds, certified=found is not None,
                     bound=None if found is None else found[2].relative)
            if found is not None and found[2].relative <= best[2].relative:
                best, finish = found, "dcd + polish"
                progress.evaluation(checks, best[2], round=rounds)
                if best[2].relative <= gap_tol:
                    break
        if settled:
            tol = max(tol / TOL_FACTOR, TOL_FLOOR)
    W, b, bound, mu = best
    status = verdict(bound, gap_tol, hit_limit=True)
    info = {"rounds": rounds, "sweeps": sweeps, "checks": checks, "polishes": polishes, "rho": dual.rho}
    return SolveResult(problem=dual.problem, coef=W, b=b, objective=bound.primal, status=status, method="smo",
                       solver="SMO-dcd", solve_time=0.0, iterations=rounds, form="dcd", finish=finish, info=info,
                       **report_fields(dual.problem, bound, gap_tol, dual=dual.matrix(dual.sign * mu)))
