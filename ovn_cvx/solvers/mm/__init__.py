"""The fast solver (docs/theory.md §9): majorization-minimization (MM) of the ε-smoothed objective, an exact finish
(a structured interior-point method, or the active-set polish), and a proven bound on every result.

* Each iteration minimizes the quadratic majorizer of the hinge at z_p = max(|r_p|, ε), i.e. it is exact
  MM on the smoothed objective F̃_ε, which is monotone; the stopping rule is on F̃_ε (§9.1).
* Primal form (linear: features X; kernels with a low-rank G: eigen-features L) uses per-class Cholesky
  blocks and the low-rank coupling (§9.2); the pair form (kernels by default) one n×n Cholesky (§9.3).
* Over-relaxation after a burn-in (§9.7); by default also generalized Newton steps on F̃_ε (same structured
  solve, backtracking, an MM step when no Newton step lowers F̃_ε), from ε = 0.5 with ε-continuation.
* The polish (§9.5) removes the ε bias: it is attempted when the active-set partition has settled (and at
  least every ``polish_every`` iterations) and accepted only with a KKT certificate.
* The interior-point finish (§9.8) solves the exact QP with the same structured systems in a number of
  iterations that does not depend on degeneracy (many pairs on the margin, W ≈ 0, α near its ends).
* Every result carries the weak-duality bound F − D(μ̂) ≥ F − F* of §6; ``status`` is "optimal" (``success``)
  only when that bound is within ``gap_tol``·max(1, |F|).
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..._blas import blas_controller
from ..._memory import check_fits, fits
from ..._validation import check_number
from ...duality import GapBound, gap_bound, project_hard_constraints, signed_dual
from ...problem import KERNEL_REMEDY, Problem
from ...result import SolveResult, within_gap_tol
from .batched import BatchedPrimalStepper, batchable
from .common import GramOperator, State, smoothed_hinge, state_objective
from .interior import PATIENCE, InteriorPoint
from .matrix_free import solve_matrix_free
from .pairs import PairStepper
from .polish import IN_S, free_parameters, partition, polish, polish_partition
from .primal import PrimalStepper

FORMS = ("auto", "primal", "pair", "matrix-free")
FINISHES = ("auto", "interior", "polish", "none")
#: iteration limit of the interior-point finish (measured 5–24 iterations; docs/theory.md §9.8)
INTERIOR_MAX_ITER = 100
#: the interior point's own target for the relative bound: well inside the default gap_tol, near round-off
INTERIOR_TOL = 1e-9
#: rounds of each crossover: an interior point's margin set is right or nearly right (measured: ≤ 4 rounds when
#: it certifies); where it is not (margin pairs with μ at a bound, which the active set moves back and forth)
#: more rounds only cost time (glass, SwHb, β = 0.01: 40 rounds, 42 ms, for an interior point that took 17 ms)
CROSSOVER_ROUNDS = 5
#: the early crossover: once the interior point's complementarity is within EARLY_CROSSOVER·max(1, |F|) (before
#: any exact evaluation), the polish of the margin set it points to, at most EARLY_ROUNDS rounds
EARLY_CROSSOVER = 1e-4
EARLY_ROUNDS = 3
#: ... accepted with a proven relative bound within this fraction of gap_tol (at least INTERIOR_TOL): a hundredfold
#: margin to the promise. Near the ends of α a certified partition's bound can stay at ~1e-7 (P⁻¹ amplifies the dual
#: point's round-off, docs/theory.md §9.9), where the interior point alone gets to 1.5e-8 (breast_cancer, SwSb,
#: α = −0.999, β = 1e4): that one goes on; glass, SwHb, α = −0.199, β = 1e4 certified at 1.5e-9, where requiring
#: the interior point's 1e-9 cost two iterations and the crossover (27 ms, slower than ECOS's 24 ms)
EARLY_ACCEPT = 1e-2
#: the interior point's second pass (to INTERIOR_TOL, after a failed crossover, the result already within gap_tol)
#: stops after this many evaluations without a better bound (the first pass: interior.PATIENCE)
REFINE_PATIENCE = 2
#: a cold start with at least this many pairs (primal form) tries the MM phase first, for at most
#: MM_FIRST_BUDGET iterations (measured on blobs: 10–17 iterations when the polish certifies)
MM_FIRST_PAIRS = 5000
MM_FIRST_BUDGET = 25
MM_FIRST_FREE = 1000
#: ... or with more free parameters, when the pairs outnumber them this many times (see _mm_first)
MM_FIRST_RATIO = 5
#: the ε continuation (when the polish fails at convergence) stops at this floor
MIN_EPS = 1e-6
#: the ε continuation divides ε by this (measured linear N = 10000: 2 fewer iterations than 10, certified at
#: ε = 0.5 instead of 0.1)
EPS_FACTOR = 2.0
#: the largest structured system (entries) the "auto" form builds for a linear problem; beyond it, matrix-free
#: (2**27 doubles = 1 GiB)
STRUCTURED_BUDGET = 2**27
#: problems with more pairs than this many per feature (n ≥ 4 000·(M+1)) go matrix-free under "auto" even when a
#: structured form fits. Measured, primal form against matrix-free: dense blobs (M = 50, K = 5) 2.1 s / 2.5 s at
#: N = 100 000 (1 960 pairs per feature), 11.1 s / 4.9 s at 300 000, and at 1 000 000 the primal form's interior point
#: ended "inaccurate" after 65 s where the matrix-free form certified in 15 s; Nyström features (N = 100 000,
#: M = 1 000) 24 s / 57 s (docs/theory.md §9.11)
MATRIX_FREE_PAIRS = 4000
#: the largest condition number of P for which "auto" may choose the pair form (which works with P⁻¹)
PAIR_CONDITION = 1e4
#: band half-width of the first polish partition from a warm start: the margin pairs of a certified solution
WARM_DELTA = 1e-6


def _check_warm_start(problem: Problem, warm_start):
    if warm_start is None:
        return None, None
    if not isinstance(warm_start, SolveResult):
        raise TypeError(f"warm_start must be a SolveResult, got {type(warm_start).__name__}")
    if not warm_start.has_solution:
        raise ValueError(f"warm_start holds no solution (status {warm_start.status!r})")
    old = warm_start.problem
    if old.is_kernel != problem.is_kernel or old.variant != problem.variant:
        raise ValueError(f"warm_start solves a {old.variant} {'kernel' if old.is_kernel else 'linear'} problem, "
                         f"not a {problem.variant} {'kernel' if problem.is_kernel else 'linear'} one")
    coef, b = np.asarray(warm_start.coef, dtype=float), np.asarray(warm_start.b, dtype=float)
    if coef.shape != problem.coef_shape or b.shape != (problem.n_classes,):
        raise ValueError(f"warm_start has coef {coef.shape} and b {b.shape}, the problem needs "
                         f"{problem.coef_shape} and ({problem.n_classes},)")
    if not (np.isfinite(coef).all() and np.isfinite(b).all()):
        raise ValueError("warm_start has non-finite coefficients (NaN or inf)")
    return coef, b


def _make_stepper(problem: Problem, form: str):
    """The iteration of the cheaper form (docs/theory.md §9.3 "Choice for kernels"): per iteration the primal
    form costs about n·d² (the class blocks) + K·d³ (their factors), the pair form n³/3, with d the rank of the
    features (M for linear problems: wide data such as scene, M = 294 at N = 300, is cheaper in pair form)."""
    if form == "auto":
        n, d, K = len(problem.pairs), problem.rank_bound + 1, problem.n_classes
        # the pair form works with P⁻¹: near the ends of α its condition number (≥ 1e4) costs the b-equations
        # their accuracy, and the primal form never inverts P (eigenvalues 1 − α and 1 + (K − 1)α; hard w: P = I)
        conditioned = problem.coupling_ops.condition <= PAIR_CONDITION
        form = "primal" if n * d * d + K * d ** 3 < n ** 3 / 3 or not conditioned else "pair"
    if problem.is_kernel:
        check_fits(_kernel_peak(problem, form), f"the MM solver's {form} form of {problem!r}", KERNEL_REMEDY)
    if form == "pair":
        return PairStepper(problem, GramOperator(problem))
    factor = problem.kernel_factor if problem.is_kernel else None
    if batchable(problem, problem.X if factor is None else factor.features):
        return BatchedPrimalStepper(problem, factor)  # tiny blocks: the class loop vectorized (docs/theory.md §9.7)
    return PrimalStepper(problem, factor)


def _kernel_peak(problem: Problem, form: str) -> int:
    """Bytes a kernel problem's structured form allocates at its peak, at least: N² + 4n² doubles in pair form (the
    Gram, the n×n pair matrix and its factors), 2N² + (2 + 4K)·d² in primal form (the Gram, the N×d eigen-features,
    the K class blocks of (d+1)², their factors and inverses); less the Gram of a precomputed kernel, which is the
    caller's. A lower bound, so that only what cannot fit is refused: measured with tracemalloc, the peak is
    1.0–1.3× it (docs/theory.md §9.13)."""
    N, n, K = problem.n_samples, len(problem.pairs), problem.n_classes
    doubles = N * N + 4 * n * n if form == "pair" else 2 * N * N + (2 + 4 * K) * problem.rank_bound ** 2
    if problem.is_precomputed:
        doubles -= N * N
    return 8 * doubles


def _out_of_reach(problem: Problem) -> bool:
    """Whether "auto" takes the matrix-free form: both structured forms exceed STRUCTURED_BUDGET entries (the
    primal form's K blocks of (d+1)² and its n×(d+1) pair rows for dense data, the pair form's n×n matrix), or there
    are at least MATRIX_FREE_PAIRS pairs per feature. Linear problems only: a kernel problem has its N×N Gram
    already."""
    if problem.is_kernel:
        return False
    n, d, K = len(problem.pairs), problem.n_features + 1, problem.n_classes
    rows = n * d if not sp.issparse(problem.X) else 0
    return min(K * d * d + rows, n * n) > STRUCTURED_BUDGET or n >= MATRIX_FREE_PAIRS * d


def _matrix_free(problem, gap_tol, max_iter, warm_coef, warm_b) -> SolveResult:
    """form="matrix-free" (docs/theory.md §9.11): Newton-CG with ε continuation, the same proven bound."""
    if problem.is_kernel:
        raise ValueError("form='matrix-free' solves linear problems (kernel='linear'); kernel problems use the "
                         "'pair' or 'primal' form, or an explicit feature map (kernel_approximation)")
    run, stop = solve_matrix_free(problem, gap_tol=gap_tol, max_iter=max_iter, warm_coef=warm_coef, warm_b=warm_b)
    info = {"finish": "newton-cg", "stop": stop, "eps": run.eps, "cg_iterations": run.cg_iterations,
            "extrapolations": run.extrapolations, "pair_solves": run.pair_solves, "primal_solves": run.primal_solves,
            "finish_solves": run.finish_solves}
    point, bound = run.best
    status = _verdict(bound, gap_tol, hit_limit=stop == "max_iter")
    return _result(problem, run, point.W, point.b, bound, gap_tol, status, run.iterations, info, run.history)


@dataclass(frozen=True)
class Options:
    """The MM run's settings, validated once (see :func:`solve_mm`)."""

    eps: float
    tol: float
    gap_tol: float
    max_iter: int
    relax: bool
    newton: bool
    finish: str
    polish_every: int
    burn_in: int

    @property
    def polishes(self) -> bool:
        return self.finish == "polish"


def _check_flag(name, flag):
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    return bool(flag)


def solve_mm(problem: Problem, *, eps: float | None = None, tol: float = 1e-9, gap_tol: float = 1e-6,
             max_iter: int = 10000, warm_start: SolveResult | None = None, relax: bool = True,
             newton: bool = True, form: str = "auto", finish: str = "auto", polish_every: int | None = None,
             burn_in: int | None = None) -> SolveResult:
    """Solve ``problem`` exactly: MM phases where they win, an exact finish, and a proven bound.

    Parameters
    ----------
    eps : float in (0, 1], optional
        The floor ε of the majorizer: MM minimizes F̃_ε, within (ε/4)·Σ_{band} c_p of F (docs/theory.md §9.1).
        Default 0.5 for a cold start with Newton steps and the polish (the ε continuation then refines it),
        else 1e-2. Above 1 the smoothing covers every margin and the model loses its meaning.
    tol : float > 0
        MM phases: stop when the relative decrease of F̃_ε in one iteration is ≤ tol (with the polish, also when
        a full Newton step keeps the active-set partition it was modelled on).
    gap_tol : float > 0
        The requested accuracy: ``status`` is "optimal" (``success``) only when the proven bound F − D(μ̂) on
        F − F* (docs/theory.md §6) is ≤ gap_tol·max(1, |F|); otherwise "inaccurate" or "max_iter", with the bound in
        ``gap_bound``.
    max_iter : int > 0
        Iteration limit of the MM phase (the interior-point finish stops at min(max_iter, 100)).
    warm_start : SolveResult, optional
        A solution of a problem with the same data and variant (e.g. a neighbouring β or α).
    relax : bool
        Over-relaxation θ ← 2θ_new − θ_old after ``burn_in`` iterations (default 20; 1 with Newton steps),
        kept only if F̃_ε decreases.
    newton : bool
        After ``burn_in`` MM iterations, generalized Newton steps on F̃_ε with backtracking (docs/theory.md §9.7),
        falling back to an MM step when no Newton step lowers F̃_ε: F̃_ε stays monotone. ``False``: plain MM.
    form : {"auto", "primal", "pair"}
        The structured systems' form; "auto": the cheaper one by its cost per step, for linear problems too
        (wide data, M > N, in pair form; see ``_make_stepper``).
    finish : {"auto", "interior", "polish", "none"}
        "interior": the interior-point method (docs/theory.md §9.8) from a cold start, no MM phase. "polish": MM with
        ε continuation and the certified active-set polish (§9.5). "none": MM alone (the paper's algorithm,
        with Newton steps unless ``newton=False``). "auto" (default): from a warm start, one polish of the
        warm start's own margin set (along a β or α path it is often still optimal: certified in one round),
        then the interior point; from a cold start, the interior point.
    polish_every : int, optional
        ``finish="polish"``: attempt the polish at least this often (default 50 primal, 5 pair form; backing
        off ×2 up to ×8 after failures), and whenever the active-set partition has been stable for 3 iterations.

    The result carries ``gap_bound`` (absolute), ``relative_gap_bound``, ``dual_objective``, ``certified``
    (= ``success``), ``form``, ``finish`` (what produced the answer: "warm polish", "interior", "interior + polish",
    "polish", "mm" or "newton-cg") and ``dual``; ``info`` the phases' counters.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be an ovn_cvx.Problem, got {type(problem).__name__}")
    if eps is not None:
        eps = check_number("eps", eps, low=0, strict=True)
        if eps > 1.0:
            raise ValueError(f"eps must be <= 1 (the margin's width), got {eps}: larger floors smooth every "
                             "hinge into a quadratic and the model loses its meaning")
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    if finish not in FINISHES:
        raise ValueError(f"finish must be one of {FINISHES}, got {finish!r}")
    tol = check_number("tol", tol, low=0, strict=True)
    gap_tol = check_number("gap_tol", gap_tol, low=0, strict=True)
    max_iter = check_number("max_iter", max_iter, low=1, integer=True)
    relax, newton = _check_flag("relax", relax), _check_flag("newton", newton)
    if polish_every is not None:
        polish_every = check_number("polish_every", polish_every, low=1, integer=True)
    if burn_in is not None:
        burn_in = check_number("burn_in", burn_in, low=1, integer=True)
    warm_coef, warm_b = _check_warm_start(problem, warm_start)

    start = time.perf_counter()
    # One BLAS thread: the iterations work on small matrices, where threads only add overhead (docs/theory.md §9.7); on
    # a loaded 2-core machine even the n×n Cholesky of the pair form measured 8× slower threaded, and the
    # matrix-free form's vector operations 40 ms per CG iteration (length 10⁵) instead of well under 1 ms.
    with blas_controller().limit(limits=1, user_api="blas"):
        if form == "matrix-free" or (form == "auto" and _out_of_reach(problem)):
            result = _matrix_free(problem, gap_tol, max_iter, warm_coef, warm_b)
        else:
            structured = functools.partial(_structured, problem, eps=eps, tol=tol, gap_tol=gap_tol,
                                           max_iter=max_iter, relax=relax, newton=newton, finish=finish,
                                           polish_every=polish_every, burn_in=burn_in, warm_coef=warm_coef,
                                           warm_b=warm_b, start=start)
            result = structured(form)
            if form == "auto" and _retry_in_primal(problem, result, finish):
                result = _better(structured("primal"), result)
    result.solve_time = time.perf_counter() - start
    return result


def _structured(problem, form, eps, tol, gap_tol, max_iter, relax, newton, finish, polish_every, burn_in,
                warm_coef, warm_b, start) -> SolveResult:
    """The primal or pair form: MM phases, the interior point, the polish."""
    stepper = _make_stepper(problem, form)
    if eps is None:
        # without the polish there is no ε continuation: F̃_0.5's minimizer would be the answer
        eps = 0.5 if newton and finish == "polish" and warm_coef is None else 1e-2
    # a pair-form iteration costs O(n³), a polish round O(|S|³ + N²K): attempt often (measured RBF N=500:
    # certified after 5 iterations instead of 50)
    options = Options(eps=eps, tol=tol, gap_tol=gap_tol, max_iter=max_iter, relax=relax, newton=newton,
                      finish=finish, burn_in=burn_in or (1 if newton else 20),
                      polish_every=polish_every or (5 if stepper.form == "pair" else 50))
    setup_time = time.perf_counter() - start
    if finish in ("polish", "none"):
        result = _mm(problem, stepper, options, warm_coef, warm_b)
    else:
        result = _finish(problem, stepper, options, warm_coef, warm_b)
    result.info["setup_time"] = setup_time
    return result


def _retry_in_primal(problem, result: SolveResult, finish: str) -> bool:
    """Whether "auto" re-solves an uncertified pair-form finish in the primal form (where its blocks fit): the pair
    form's systems carry the Gram matrix's condition number, and on a nearly singular Gram (an RBF kernel on 1-D
    data) its interior point stalls short of gap_tol where the primal form's, on the eigen-features, certifies
    (measured: 17–19 points, bounds 2.6e-6 and 4.2e-4 against 3e-15 and 5e-10; docs/theory.md §9.8)."""
    d, K = problem.rank_bound + 1, problem.n_classes
    return (result.form == "pair" and finish in ("auto", "interior") and not result.success
            and K * d * d <= STRUCTURED_BUDGET and (not problem.is_kernel or fits(_kernel_peak(problem, "primal"))))


def _better(primal: SolveResult, pair: SolveResult) -> SolveResult:
    """The result with the smaller proven bound; the primal one records the pair form's attempt."""
    primal.info["pair_attempt"] = {"relative_gap_bound": pair.relative_gap_bound, "finish": pair.finish,
                                   "iterations": pair.iterations}
    return primal if primal.relative_gap_bound <= pair.relative_gap_bound else pair


def _verdict(bound: GapBound, gap_tol: float, hit_limit: bool) -> str:
    """"optimal" only with a proven bound within the requested accuracy."""
    if within_gap_tol(bound.relative, gap_tol):
        return "optimal"
    return "max_iter" if hit_limit else "inaccurate"


def _result(problem, stepper, coef, b, bound: GapBound, gap_tol, status, iterations, info, history=None):
    finish = info.pop("finish")
    return SolveResult(problem=problem, coef=coef, b=b, objective=bound.primal, status=status, method="mm",
                       solver=f"MM-{stepper.form}", solve_time=0.0, iterations=iterations,
                       history=None if history is None else np.asarray(history), gap_bound=bound.absolute,
                       relative_gap_bound=bound.relative, dual_objective=bound.dual, gap_tol=gap_tol,
                       form=stepper.form, finish=finish, dual=signed_dual(problem, bound.mu), info=info)


def _finish(problem, stepper, options, warm_coef, warm_b) -> SolveResult:
    """finish="auto"/"interior": the MM phase where it wins (auto), else the interior point and its crossover."""
    operator = GramOperator(problem)
    if options.finish == "auto" and warm_coef is not None:
        found = _warm_polish(problem, stepper, operator, options, warm_coef, warm_b)
        if found is not None:
            return found
    spent = 0
    if options.finish == "auto" and warm_coef is None and _mm_first(problem, stepper):
        phase = _mm(problem, stepper, replace(options, finish="polish", eps=0.5 if options.newton else options.eps,
                                              max_iter=min(options.max_iter, MM_FIRST_BUDGET)), None, None)
        if phase.success:
            return phase
        spent = phase.iterations
    return _interior(problem, stepper, operator, options, spent)


def _mm_first(problem: Problem, stepper) -> bool:
    """Whether a cold start tries the MM phase (Newton steps, polish) before the interior point: in primal form
    with many pairs, where a Newton iteration touches only the band while an interior-point iteration forms
    every class block (measured, blobs N = 10000: 0.038 s against 0.18 s when the polish certifies; 0.21 s
    against 0.69 s uncertified when the optimum is degenerate, so the phase gets a budget), and with few free
    parameters K(d+1) or many pairs per free parameter: the polish solves a system of the margin set's size
    (scene with every non-label a negative, 7 266 pairs, K(d+1) = 1770, 4.1 pairs per parameter: the phase cost
    2.6 s, the interior point alone 1.6 s; 100 000 pairs on 1 000 Nyström features, K = 5, 20 pairs per
    parameter: 12 s, certified after 8 iterations, against 108 s for the interior point)."""
    n, free = len(problem.pairs), problem.n_classes * (problem.rank_bound + 1)
    return stepper.form == "primal" and n >= MM_FIRST_PAIRS and (free <= MM_FIRST_FREE or n >= MM_FIRST_RATIO * free)


def _warm_polish(problem, stepper, operator, options, warm_coef, warm_b) -> SolveResult | None:
    """The warm start's own margin set, polished: along a β or α path often still optimal (one round)."""
    state = stepper.initial(warm_coef, warm_b)
    exact = state_objective(problem, state)
    found = _certified_polish(problem, operator, state.r, exact, (WARM_DELTA,), options)
    if found is None:
        return None
    return _result(problem, stepper, *found, options.gap_tol, "optimal", 0, {"finish": "warm polish"}, [exact])


def _interior(problem, stepper, operator, options, spent: int) -> SolveResult:
    """The interior point to ``gap_tol``, then the crossover: the polish of the margin set its last two iterates
    point to (Tapia's indicators, ``interior.Point.margin_sets``), exact to round-off when it certifies; otherwise the
    interior point goes on to its own target INTERIOR_TOL and the crossover is tried once more from there (unless
    from a partition that failed, or a degenerate one after a failure). Before all that, the early crossover: one
    polish at the first iterate whose complementarity is within EARLY_CROSSOVER, before any exact evaluation
    (docs/theory.md §9.8: on tiny problems it saves 1–2 iterations and the evaluations). Every answer is proven: a
    polish is accepted only with its bound within gap_tol. ``spent``: iterations of an MM phase before it (counted
    in ``iterations``)."""
    limit = min(options.max_iter, INTERIOR_MAX_ITER)
    ipm = InteriorPoint(problem, stepper, min(INTERIOR_TOL, options.gap_tol))
    info = {"finish": "interior", "mm_iterations": spent}
    failed = set()  # the initial partitions of failed crossovers: the same partition fails again

    def crossover(sets, point, reference, rounds, tol=None):
        key = sets.tobytes()
        # a degenerate margin set (more pairs than free parameters) after a failed crossover: the same failure
        # (measured on glass: 96 then 98 margin pairs of 60 parameters, 5 rounds each, never certified)
        if key in failed or (failed and np.count_nonzero(sets == IN_S) > free_parameters(problem)):
            return None
        found = _proven(problem, polish_partition(problem, operator, sets, reference, iterate_b=point.theta.b,
                                                  iterate_mu=point.u, max_rounds=rounds), options, tol)
        if found is None:
            failed.add(key)
        return found

    run = ipm.run(limit, options.gap_tol, pause=EARLY_CROSSOVER)
    # paused at the early crossover point (not evaluated): the polish, if its margin set is not degenerate (more
    # margin pairs than free parameters: a singular system whose rounds rarely certify and cost most)
    sets = ipm.point.margin_sets(ipm.previous) if ipm.pending else None
    if sets is not None and np.count_nonzero(sets == IN_S) <= free_parameters(problem):
        found = crossover(sets, ipm.point, ipm.history[-1], EARLY_ROUNDS,
                          tol=min(options.gap_tol, max(INTERIOR_TOL, EARLY_ACCEPT * options.gap_tol)))
        if found is not None:
            info.update(finish="interior + polish", interior_iterations=run.iterations, early_crossover=True)
            return _result(problem, stepper, *found, options.gap_tol, "optimal", spent + run.iterations, info,
                           run.history)
    for tol, patience in ((options.gap_tol, PATIENCE), (min(INTERIOR_TOL, options.gap_tol), REFINE_PATIENCE)):
        run = ipm.run(limit, tol, patience=patience)
        coef, b, bound = run.coef, run.b, run.bound
        if bound.relative > options.gap_tol:
            break
        best = ipm.best
        found = crossover(best.point.margin_sets(best.previous), best.point, bound.primal, CROSSOVER_ROUNDS)
        if found is not None and found[2].primal <= bound.primal:
            (coef, b, bound), info["finish"] = found, "interior + polish"
            break
        if bound.relative <= INTERIOR_TOL:
            break
    info["interior_iterations"] = run.iterations
    status = _verdict(bound, options.gap_tol, hit_limit=not run.converged and run.iterations >= options.max_iter)
    return _result(problem, stepper, coef, b, bound, options.gap_tol, status, spent + run.iterations, info,
                   run.history)


def _certified_polish(problem, operator, r, reference, deltas, options):
    """(coef, b, bound) of a polish from residuals ``r`` that certifies with a proven bound within gap_tol, else
    None."""
    return _proven(problem, polish(problem, operator, r, reference, deltas), options)


def _proven(problem, outcome, options, tol=None):
    """(coef, b, bound) of a polish outcome that certifies with a proven bound within gap_tol (or ``tol`` ≤ gap_tol),
    else None."""
    if not outcome.certified:
        return None
    bound = gap_bound(problem, outcome.coef, outcome.b, outcome.mu, primal=outcome.objective)
    return (outcome.coef, outcome.b, bound) if bound.relative <= min(options.gap_tol, tol or np.inf) else None


def _newton_step(stepper, state, smooth, eps, values, max_halvings=30):
    """Generalized Newton direction on F̃_ε with backtracking: (state, F, F̃_ε, step length), or a None state
    when no step lowers F̃_ε."""
    if state.params is None:  # a warm start given as (coef, b): no iterate to step back to
        return None, None, None, 0.0
    full = stepper.newton(state, eps)
    step = 1.0
    for _ in range(max_halvings):
        candidate = full if step == 1.0 else stepper.relax(full, state, step)
        exact, smoothed = values(candidate)
        if smoothed < smooth:
            return candidate, exact, smoothed, step
        step /= 2.0
    return None, None, None, 0.0


class PolishSchedule:
    """When the MM phase attempts the polish: when the active-set partition has been stable for 3 iterations
    (and changed since the last attempt), at convergence, at the iteration limit, and at least every
    ``polish_every``·(1, 2, 4, 8, 8, …) iterations (backing off after failures)."""

    def __init__(self, every: int, eps: float, r: np.ndarray):
        self.every, self.wait = every, every
        self.attempts, self.last, self.attempted = 0, 0, None
        self.sets, self.stable = partition(r, eps), 0

    def observe(self, r: np.ndarray, eps: float) -> bool:
        """Record the partition of the new iterate; True if it is the one the previous iterate had."""
        new = partition(r, eps)
        kept = np.array_equal(new, self.sets)
        self.stable = self.stable + 1 if kept else 0
        self.sets = new
        return kept

    def due(self, t: int, forced: bool) -> bool:
        settled = self.stable >= 3 and t - self.last >= 10 and (
            self.attempted is None or not np.array_equal(self.sets, self.attempted))
        return forced or settled or t - self.last >= self.wait

    def attempted_at(self, t: int):
        self.attempts += 1
        if self.attempts > 1:
            self.wait = min(2 * self.wait, 8 * self.every)
        self.last, self.attempted = t, self.sets


class MMRun:
    """The state of one MM run (docs/theory.md §9.1–§9.7) and its named steps; :func:`_mm` is the loop over them."""

    def __init__(self, problem, stepper, options: Options, warm_coef, warm_b):
        self.problem, self.stepper, self.options = problem, stepper, options
        self.eps, self.min_eps = options.eps, min(options.eps, MIN_EPS)
        self.state = stepper.initial(warm_coef, warm_b)
        self.exact, self.smooth = self.values(self.state)
        self.history, self.smoothed = [self.exact], [self.smooth]
        self.t, self.relaxed, self.newton_steps = 0, 0, 0
        self.operator = GramOperator(problem) if options.polishes else None
        self.schedule = PolishSchedule(options.polish_every, self.eps, self.state.r)
        self.outcome = None
        if options.polishes and warm_coef is not None:
            # first the warm start's own margin set (|r| at round-off): along a β or α path it often stays the
            # optimal partition (measured: the same 157 margin pairs for β from 0.25 to 4)
            self.attempt_polish((WARM_DELTA,))

    @property
    def certified(self) -> bool:
        return self.outcome is not None and self.outcome.certified

    def values(self, state: State):
        """(F, F̃_ε) at ``state``."""
        return (state_objective(self.problem, state),
                state_objective(self.problem, state, smoothed_hinge(state.r, self.eps)))

    def mm_step(self):
        """One MM step at z = max(|r|, ε), over-relaxed when that lowers F̃_ε (docs/theory.md §9.2, §9.7)."""
        new = self.stepper.step(np.maximum(np.abs(self.state.r), self.eps))
        exact, smooth = self.values(new)
        if self.options.relax and self.t > self.options.burn_in and self.state.params is not None:
            candidate = self.stepper.relax(new, self.state)
            cand_exact, cand_smooth = self.values(candidate)
            if cand_smooth < smooth:
                self.relaxed += 1
                return candidate, cand_exact, cand_smooth, 0.0
        return new, exact, smooth, 0.0

    def step(self) -> tuple[float, float]:
        """Newton with backtracking after the burn-in, else (or when it fails) an MM step; returns (decrease of
        F̃_ε, Newton step length)."""
        self.t += 1
        new = None
        if self.options.newton and self.t > self.options.burn_in:
            new, exact, smooth, length = _newton_step(self.stepper, self.state, self.smooth, self.eps, self.values)
            self.newton_steps += new is not None
        if new is None:
            new, exact, smooth, length = self.mm_step()
        decrease = self.smooth - smooth
        self.state, self.exact, self.smooth = new, exact, smooth
        self.history.append(exact)
        self.smoothed.append(smooth)
        return decrease, length

    def attempt_polish(self, deltas=()):
        # δ = ε fits the iterates near θ_ε; δ = 10ε (docs/theory.md §9.5) those still far from it
        self.schedule.attempted_at(self.t)
        self.outcome = polish(self.problem, self.operator, self.state.r, self.exact,
                              (*deltas, self.eps, 10.0 * self.eps))

    def refine_eps(self) -> bool:
        """F̃_ε has converged but θ_ε is too far from the optimum for the polish: continue MM on a smaller floor
        (F̃ stays monotone, h_ε is nondecreasing in ε). False at the floor."""
        if self.eps <= self.min_eps:
            return False
        self.eps = max(self.eps / EPS_FACTOR, self.min_eps)
        self.smooth = self.values(self.state)[1]
        self.schedule.sets = partition(self.state.r, self.eps)
        return True

    def dual_estimate(self) -> np.ndarray:
        """μ_p = c_p h'_ε(r_p), the slope of the smoothed hinge: the dual point MM converges to (docs/theory.md
        §9.3)."""
        return self.problem.cost * np.clip((self.state.r + self.eps) / (2.0 * self.eps), 0.0, 1.0)


def _mm(problem, stepper, options: Options, warm_coef, warm_b) -> SolveResult:
    """finish="polish"/"none": MM (with Newton steps) until the polish certifies or F̃_ε converges at the floor."""
    run = MMRun(problem, stepper, options, warm_coef, warm_b)
    stop = "max_iter"
    while not run.certified and run.t < options.max_iter:
        decrease, length = run.step()
        converged = decrease <= options.tol * abs(run.smooth)
        if options.polishes:
            kept = run.schedule.observe(run.state.r, run.eps)
            # a full Newton step that keeps the partition it was modelled on lands on θ_ε (up to the damping)
            converged = converged or (length == 1.0 and kept)
            if run.schedule.due(run.t, converged or run.t == options.max_iter):
                run.attempt_polish()
        if converged and not run.certified and not (options.polishes and run.refine_eps()):
            stop = "tol"
            break
    return _mm_result(run, stop)


def _mm_result(run: MMRun, stop: str) -> SolveResult:
    problem, options = run.problem, run.options
    info = {"eps": run.eps, "eps_initial": options.eps, "tol": options.tol,
            "smoothed_history": np.asarray(run.smoothed), "relaxed_steps": run.relaxed,
            "newton_steps": run.newton_steps, "polish_attempts": run.schedule.attempts}
    if run.certified:
        out = run.outcome
        coef, b, mu, primal = out.coef, out.b, out.mu, out.objective
        info.update(finish="polish", certificate=out.certificate, polish_rounds=out.rounds, polish_iteration=run.t)
        stop = "certified"
    else:
        coef, b = project_hard_constraints(problem, *run.stepper.solution(run.state))
        mu, primal = run.dual_estimate(), None
        band = np.abs(run.state.r) < run.eps
        # F̃_ε − F at this iterate; at the limit θ_ε it bounds F(θ_ε) − F* (docs/theory.md §9.1.3)
        info.update(finish="mm", smoothing_bound=float(run.eps / 4.0 * problem.cost[band].sum()))
        if run.outcome is not None:
            info["polish_failure"] = run.outcome.reason
    info["stop"] = stop
    bound = gap_bound(problem, coef, b, mu, primal=primal)
    status = _verdict(bound, options.gap_tol, hit_limit=stop == "max_iter")
    return _result(problem, run.stepper, coef, b, bound, options.gap_tol, status, run.t, info, run.history)
