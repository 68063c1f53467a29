"""The choice of form (docs/theory.md §9.3, §9.11): the primal or the pair form's structured systems, or the
matrix-free form, by their cost per step and their memory; a cold start's MM phase first where it wins."""
from __future__ import annotations

import scipy.sparse as sp

from ..._memory import check_fits, fits
from ...problem import KERNEL_REMEDY, Problem
from ...result import SolveResult
from .batched import BatchedPrimalStepper, batchable
from .common import GramOperator
from .pairs import PairStepper
from .primal import PrimalStepper

#: a cold start with at least this many pairs (primal form) and more than MM_FIRST_FREE free parameters, at least
#: MM_FIRST_RATIO times as many pairs as free parameters, tries the MM phase first, for at most MM_FIRST_BUDGET
#: iterations (see mm_first)
MM_FIRST_PAIRS = 5000
MM_FIRST_BUDGET = 25
MM_FIRST_FREE = 1000
MM_FIRST_RATIO = 5
#: the largest structured system (entries) the "auto" form builds for a linear problem; beyond it, matrix-free
#: (2**27 doubles = 1 GiB)
STRUCTURED_BUDGET = 2**27
#: the largest condition number of P for which "auto" may choose the pair form (which works with P⁻¹)
PAIR_CONDITION = 1e4
#: a sparse linear problem for which the cost per step picks the pair form goes matrix-free under "auto" from this
#: many pairs: the pair form factors an n×n system each step, the matrix-free form multiplies by the sparse pair
#: rows. Measured on make_sparse_multilabel (5 000 features, 10 labels; SwHb and HwSb, β from 0.01 to 1e4; one BLAS
#: thread), pair form against matrix-free: n = 694 0.20–0.39 s / 0.05–0.60 s, n = 1 368 0.86–1.34 s / 0.15–1.38 s,
#: n = 2 271 3.3–4.4 s / 0.29–2.1 s; with every non-label a negative, n = 6 000: 55 s / 0.56 s. On dense data (scene,
#: n = 322) the pair form wins by 3–50× and the matrix-free form can fail to certify at large β, so dense data keeps
#: the pair form
SPARSE_MATRIX_FREE_PAIRS = 2000


def make_stepper(problem: Problem, form: str):
    """The iteration of the cheaper form (docs/theory.md §9.3 "Choice for kernels"): per iteration the primal
    form costs about n·d² (the class blocks) + K·d³ (their factors), the pair form n³/3, with d the rank of the
    features (M for linear problems: wide data such as scene, M = 294 at N = 300, is cheaper in pair form)."""
    if form == "auto":
        form = structured_form(problem)
    if problem.is_kernel:
        check_fits(kernel_peak(problem, form), f"the MM solver's {form} form of {problem!r}", KERNEL_REMEDY)
    if form == "pair":
        return PairStepper(problem, GramOperator(problem))
    factor = problem.kernel_factor if problem.is_kernel else None
    if batchable(problem, problem.X if factor is None else factor.features):
        return BatchedPrimalStepper(problem, factor)  # tiny blocks: the class loop vectorized (docs/theory.md §9.7)
    return PrimalStepper(problem, factor)


def structured_form(problem: Problem) -> str:
    """The structured form "auto" takes: the cheaper step of the two (see ``make_stepper``)."""
    n, d, K = len(problem.pairs), problem.rank_bound + 1, problem.n_classes
    # the pair form works with P⁻¹: near the ends of α its condition number (≥ 1e4) costs the b-equations
    # their accuracy, and the primal form never inverts P (eigenvalues 1 − α and 1 + (K − 1)α; hard w: P = I)
    conditioned = problem.coupling_ops.condition <= PAIR_CONDITION
    return "primal" if n * d * d + K * d ** 3 < n ** 3 / 3 or not conditioned else "pair"


def kernel_peak(problem: Problem, form: str) -> int:
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


def out_of_reach(problem: Problem) -> bool:
    """Whether "auto" takes the matrix-free form: both structured forms exceed STRUCTURED_BUDGET entries (the
    primal form's K blocks of (d+1)² and its n×(d+1) pair rows for dense data, the pair form's n×n matrix), or the
    problem is :func:`sparse_and_wide`. Linear problems only: a kernel problem has its N×N Gram already.

    Many pairs per feature no longer send dense data matrix-free (docs/theory.md §9.11): with one-vs-rest negatives
    the matrix-free form's band stays large and its Newton systems slow (measured, make_classification, 20
    features, K = 5, N = 50 000, 250 000 pairs: 27 s and "inaccurate" against the primal form's 5.4 s, certified;
    Gaussian blobs, 50 features, N = 300 000: 198 s, "inaccurate")."""
    if problem.is_kernel:
        return False
    return not structured_fits(problem) or sparse_and_wide(problem)


def structured_fits(problem: Problem) -> bool:
    """Whether a structured form of a linear problem fits STRUCTURED_BUDGET entries."""
    n, d, K = len(problem.pairs), problem.n_features + 1, problem.n_classes
    rows = n * d if not sp.issparse(problem.X) else 0
    return min(K * d * d + rows, n * n) <= STRUCTURED_BUDGET


def sparse_and_wide(problem: Problem) -> bool:
    """A sparse linear problem with at least SPARSE_MATRIX_FREE_PAIRS pairs whose cheaper structured form is the
    pair form: "auto" solves it matrix-free first, and in the pair form only when that is not certified."""
    return (not problem.is_kernel and sp.issparse(problem.X) and len(problem.pairs) >= SPARSE_MATRIX_FREE_PAIRS
            and structured_form(problem) == "pair")


def retry_in_primal(problem, result: SolveResult, finish: str) -> bool:
    """Whether "auto" re-solves an uncertified pair-form finish in the primal form (where its blocks fit): the pair
    form's systems carry the Gram matrix's condition number, and on a nearly singular Gram (an RBF kernel on 1-D
    data) its interior point stalls short of gap_tol where the primal form's, on the eigen-features, certifies
    (measured: 17–19 points, bounds 2.6e-6 and 4.2e-4 against 3e-15 and 5e-10; docs/theory.md §9.8)."""
    d, K = problem.rank_bound + 1, problem.n_classes
    return (result.form == "pair" and finish in ("auto", "interior") and not result.success
            and K * d * d <= STRUCTURED_BUDGET and (not problem.is_kernel or fits(kernel_peak(problem, "primal"))))


def retry_matrix_free(problem, result: SolveResult, finish: str) -> bool:
    """Whether "auto" re-solves a structured interior-point answer of a linear problem that stalled short of gap_tol
    ("inaccurate", not an iteration limit) in the matrix-free form, whose Newton-CG and exact finish reach the optimum
    by another route (measured on dense blobs with a million pairs: the primal form's interior point ended
    "inaccurate" where the matrix-free form certified, docs/theory.md §9.11)."""
    return (not problem.is_kernel and result.status == "inaccurate" and result.form != "matrix-free"
            and finish in ("auto", "interior"))


def better(retry: SolveResult, attempt: SolveResult) -> SolveResult:
    """The result with the smaller proven bound (the retry's when equal); the retry records the first attempt under
    ``info["<form>_attempt"]`` ("pair_attempt", "primal_attempt", "matrix_free_attempt")."""
    retry.info[f"{attempt.form.replace('-', '_')}_attempt"] = {
        "relative_gap_bound": attempt.relative_gap_bound, "finish": attempt.finish, "iterations": attempt.iterations}
    return retry if retry.relative_gap_bound <= attempt.relative_gap_bound else attempt


def mm_first(problem: Problem, stepper) -> bool:
    """Whether a cold start tries the MM phase (Newton steps, polish) before the interior point: in primal form,
    with many free parameters K(d+1) and many pairs per free parameter, where an interior-point iteration's K
    factors of (d+1)² and its n·(d+1)² block products cost far more than a Newton iteration on the band (100 000
    pairs on 1 000 Nyström features, K = 5, 20 pairs per parameter: 12 s, certified after 8 iterations, against
    108 s for the interior point). With few free parameters the interior point wins (measured, K = 5, one-vs-rest
    negatives, the interior point alone against the MM phase's 25 iterations then the interior point:
    make_classification with 20 features, N = 10 000, 1.0 s against 1.4–2.1 s; Gaussian blobs with 50 features,
    N = 10 000, 0.10 s against 0.36 s, and N = 50 000, 0.24 s against 0.95 s without negatives, 22 s against 25 s
    with them; scene with every non-label a negative, 7 266 pairs, K(d+1) = 1 770: 1.6 s against 2.6 s)."""
    n, free = len(problem.pairs), problem.n_classes * (problem.rank_bound + 1)
    return stepper.form == "primal" and n >= MM_FIRST_PAIRS and free > MM_FIRST_FREE and n >= MM_FIRST_RATIO * free
