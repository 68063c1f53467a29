"""``solve_mm``: the inputs checked, the form chosen, the run timed under one BLAS thread."""
from __future__ import annotations

import functools
import time
import warnings

from ..._blas import blas_controller
from ..._validation import check_number
from ...problem import Problem
from ...result import SolveResult
from .finish import run_finish
from .forms import better, make_stepper, out_of_reach, retry_in_primal, retry_matrix_free, sparse_and_wide
from .matrix_free import solve_matrix_free
from ..verdict import GAP_TOL, verdict
from ..progress import Progress
from .options import FINISHES, FORMS, Options, check_flag, check_warm_start, pack_result

def _matrix_free(problem, gap_tol, max_iter, warm_coef, warm_b, progress) -> SolveResult:
    """form="matrix-free" (docs/theory.md §9.11): Newton-CG with ε continuation, the same proven bound."""
    progress("form", form="matrix-free")
    if problem.is_kernel:
        raise ValueError("form='matrix-free' solves linear problems (kernel='linear'); kernel problems use the "
                         "'pair' or 'primal' form, or an explicit feature map (kernel_approximation)")
    run, stop = solve_matrix_free(problem, gap_tol=gap_tol, max_iter=max_iter, warm_coef=warm_coef, warm_b=warm_b,
                                  progress=progress)
    info = {"finish": "newton-cg", "stop": stop, "eps": run.eps, "cg_iterations": run.cg_iterations,
            "extrapolations": run.extrapolations, "pair_solves": run.pair_solves, "primal_solves": run.primal_solves,
            "finish_solves": run.finish_solves}
    point, bound = run.best
    status = verdict(bound, gap_tol, hit_limit=stop == "max_iter")
    return pack_result(problem, run, point.W, point.b, bound, gap_tol, status, run.iterations, info, run.history)


def solve_mm(problem: Problem, *, eps: float | None = None, decrease_tol: float = 1e-9, gap_tol: float = GAP_TOL,
             max_iter: int = 10000, warm_start: SolveResult | None = None, relax: bool = True,
             newton: bool = True, form: str = "auto", finish: str = "auto", polish_every: int | None = None,
             burn_in: int | None = None, tol: float | None = None, verbose: bool = False) -> SolveResult:
    """Solve ``problem`` exactly: MM phases where they win, an exact finish, and a proven bound.

    Parameters
    ----------
    eps : float in (0, 1], optional
        The floor ε of the majorizer: MM minimizes F̃_ε, within (ε/4)·Σ_{band} c_p of F (docs/theory.md §9.1).
        Default 0.5 for a cold start with Newton steps and the polish (the ε continuation then refines it),
        else 1e-2. Above 1 the smoothing covers every margin and the model loses its meaning.
    decrease_tol : float > 0
        MM phases: stop when the relative decrease of F̃_ε in one iteration is ≤ decrease_tol (with the polish, also
        when a full Newton step keeps the active-set partition it was modelled on). Formerly ``tol``, which is still
        accepted with a DeprecationWarning.
    gap_tol : float > 0
        The requested accuracy: ``status`` is "optimal" (``success``) only when the proven bound F − D(μ̂) on
        F − F* (docs/theory.md §6) is ≤ gap_tol·max(1, |F|); otherwise "inaccurate" or "max_iter", with the bound in
        ``gap_bound``. Below 1e-5 the interior-point finish runs on to the exact optimum
        (its crossover: answers to round-off, whatever gap_tol asks; where no crossover certifies, the interior
        point to 1e-9); from 1e-5 up it stops once an iterate is proven within gap_tol, so a looser gap_tol buys
        time (the estimator's default linear problem: 1.5–2× faster at 1e-4).
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
    form : {"auto", "primal", "pair", "matrix-free"}
        The structured systems' form, or Newton-CG without them (linear problems, docs/theory.md §9.11); "auto":
        the cheaper structured form by its cost per step (wide data, M > N, in pair form; see ``make_stepper``),
        matrix-free when neither fits, or for sparse data whose cheaper structured form would be the pair form with
        at least ``SPARSE_MATRIX_FREE_PAIRS`` pairs (the pair form then finishes what the matrix-free form could not
        prove); a linear problem whose structured interior point stalls short of ``gap_tol`` is solved again
        matrix-free, and the answer with the smaller proven bound is kept.
    finish : {"auto", "interior", "polish", "none"}
        "interior": the interior-point method (docs/theory.md §9.8) from a cold start, no MM phase. "polish": MM with
        ε continuation and the certified active-set polish (§9.5). "none": MM alone (the paper's algorithm,
        with Newton steps unless ``newton=False``). "auto" (default): from a warm start, one polish of the
        warm start's own margin set (along a β or α path it is often still optimal: certified in one round),
        then the interior point; from a cold start, the interior point.
    polish_every : int, optional
        ``finish="polish"``: attempt the polish at least this often (default 50 primal, 5 pair form; backing
        off ×2 up to ×8 after failures), and whenever the active-set partition has been stable for 3 iterations.
    tol : float, optional
        Deprecated alias of ``decrease_tol``.
    verbose : bool, default=False
        Progress on stdout, a line per iteration, never per pair: the form ("mm form"); each interior-point iteration
        with the blocks still moving (a separable problem's classes that have not settled), the complementarity
        estimate relative to max(1, |F|), the step length and F ("mm interior iteration"); each exact evaluation
        with the best F and D(μ) so far and their proven relative bound (F − D)/max(1, |F|) ("mm evaluation": the
        last one is the result's ``relative_gap_bound``, unless a second form's run is kept); each crossover, its
        margin pairs and whether it certified ("mm crossover", "mm block crossover", "mm warm polish"); the MM
        phase's and the matrix-free form's iterations with ε, F and F̃_ε ("mm iteration", "mm stage end", "mm
        polish"); the outcome ("mm done"). The same iterations and answer as without.

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
    if tol is not None:
        warnings.warn("solve_mm(tol=...) is deprecated: the MM decrease test's tolerance is now decrease_tol",
                      DeprecationWarning, stacklevel=3)
        decrease_tol = tol
    decrease_tol = check_number("decrease_tol", decrease_tol, low=0, strict=True)
    gap_tol = check_number("gap_tol", gap_tol, low=0, strict=True)
    max_iter = check_number("max_iter", max_iter, low=1, integer=True)
    relax, newton = check_flag("relax", relax), check_flag("newton", newton)
    if polish_every is not None:
        polish_every = check_number("polish_every", polish_every, low=1, integer=True)
    if burn_in is not None:
        burn_in = check_number("burn_in", burn_in, low=1, integer=True)
    warm_coef, warm_b = check_warm_start(problem, warm_start)
    progress = Progress("mm", verbose)

    start = time.perf_counter()
    # One BLAS thread: the iterations work on small matrices, where threads only add overhead (docs/theory.md §9.7); on
    # a loaded 2-core machine even the n×n Cholesky of the pair form measured 8× slower threaded, and the
    # matrix-free form's vector operations 40 ms per CG iteration (length 10⁵) instead of well under 1 ms.
    with blas_controller().limit(limits=1, user_api="blas"):
        structured = functools.partial(_structured, problem, eps=eps, decrease_tol=decrease_tol, gap_tol=gap_tol,
                                       max_iter=max_iter, relax=relax, newton=newton, finish=finish,
                                       polish_every=polish_every, burn_in=burn_in, warm_coef=warm_coef,
                                       warm_b=warm_b, start=start, progress=progress)
        if form == "matrix-free" or (form == "auto" and out_of_reach(problem)):
            result = _matrix_free(problem, gap_tol, max_iter, warm_coef, warm_b, progress)
            if form == "auto" and not result.success and sparse_and_wide(problem):
                result = better(structured("auto"), result)  # the structured form fits: it finishes the job
        else:
            result = structured(form)
            if form == "auto" and retry_in_primal(problem, result, finish):
                result = better(structured("primal"), result)
            if form == "auto" and retry_matrix_free(problem, result, finish):
                result = better(_matrix_free(problem, gap_tol, max_iter, warm_coef, warm_b, progress), result)
    result.solve_time = time.perf_counter() - start
    progress.done(result)
    return result


def _structured(problem, form, eps, decrease_tol, gap_tol, max_iter, relax, newton, finish, polish_every, burn_in,
                warm_coef, warm_b, start, progress) -> SolveResult:
    """The primal or pair form: MM phases, the interior point, the polish."""
    stepper = make_stepper(problem, form)
    if eps is None:
        # without the polish there is no ε continuation: F̃_0.5's minimizer would be the answer
        eps = 0.5 if newton and finish == "polish" and warm_coef is None else 1e-2
    # a pair-form iteration costs O(n³), a polish round O(|S|³ + N²K): attempt often (measured RBF N=500:
    # certified after 5 iterations instead of 50)
    options = Options(eps=eps, decrease_tol=decrease_tol, gap_tol=gap_tol, max_iter=max_iter, relax=relax,
                      newton=newton, finish=finish, burn_in=burn_in or (1 if newton else 20),
                      polish_every=polish_every or (5 if stepper.form == "pair" else 50), progress=progress)
    progress("form", form=stepper.form, finish=finish)
    setup_time = time.perf_counter() - start
    result = run_finish(problem, stepper, options, warm_coef, warm_b)
    result.info["setup_time"] = setup_time
    return result
