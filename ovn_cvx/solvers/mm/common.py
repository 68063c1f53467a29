"""Pieces shared by the MM iterations and the polish: the smoothed hinge, the Gram operator, states."""
from __future__ import annotations

from typing import Callable, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, lstsq
from scipy.linalg.lapack import dpotrf, dpotrs, dsycon, dsysv

from ...duality import EPS, support_index
from ...problem import Problem
from ..progress import Progress

#: curvature of the generalized Newton model outside the band, relative to the band's c/(2ε) (docs/theory.md §9.7): it
#: only keeps the system definite; 1e-3 measured a linearly converging Newton phase
NEWTON_DAMPING = 1e-6


#: diagonal shifts (relative, after equilibration) tried when a system is numerically semidefinite
SHIFTS = (0.0, 1e-14, 1e-12, 1e-10, 1e-8)


def jacobi_scales(H: np.ndarray) -> np.ndarray | None:
    """diag(H)^{-1/2} of a symmetric block or of each block of a stack (…×D×D): the Jacobi equilibration S H S that
    the factorizations below work on; None when a diagonal entry is not positive (also NaN)."""
    diagonal = np.diagonal(H, axis1=-2, axis2=-1)
    return 1.0 / np.sqrt(diagonal) if (diagonal > 0).all() else None


class Cholesky:
    """Cholesky factor of a symmetric positive (semi)definite H, Jacobi-equilibrated first: S H S with
    S = diag(H)^{-1/2}. Badly scaled features and interior-point weights make H's diagonal span many orders of
    magnitude (measured: features ×1e8 broke the unscaled factorization). A numerically semidefinite H (many
    margin pairs with dependent rows) gets the smallest diagonal shift that factors: the certificate, not the
    solve, decides what is accepted. LAPACK is called directly: for small blocks scipy's wrappers measured
    twice the cost."""

    def __init__(self, H: np.ndarray, what: str):
        """``H`` is overwritten (its equilibrated copy); ``what`` names the system in the error."""
        scale = jacobi_scales(H)
        if scale is None:
            raise LinAlgError(f"{what} is not positive definite (diagonal entry {np.argmin(H.diagonal() > 0)} <= 0)")
        self.scale = scale
        H *= np.outer(scale, scale)
        factor, info = dpotrf(H, lower=True, overwrite_a=False, clean=False)  # H symmetric: H is Hᵀ
        if info:
            factor, info = self._shifted(H)
            if info:
                raise LinAlgError(f"{what} is not positive definite (LAPACK info {info})")
        self.factor = factor

    @staticmethod
    def _shifted(H: np.ndarray):
        diagonal = np.diag_indices_from(H)
        for added, shift in zip(SHIFTS, SHIFTS[1:]):
            H[diagonal] += shift - added
            factor, info = dpotrf(H, lower=True, overwrite_a=False, clean=False)
            if not info:
                break
        return factor, info

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        scale = self.scale if rhs.ndim == 1 else self.scale[:, None]
        return scale * dpotrs(self.factor, scale * rhs, lower=True)[0]


class BlockCholesky:
    """:class:`Cholesky` factors of a stack of K blocks H (K×D×D, may be overwritten), the same numbers without
    its per-block work: the diagonals tested and the equilibration scales computed for the stack at once, then one
    LAPACK potrf a block; the solves scale the K right-hand sides at once, one potrs a block. (numpy's batched
    Cholesky measured no faster than the potrf calls on K = 6–12 blocks of 21–73 rows, and slower with its stacked
    equilibration's large temporaries.) Where a block is not positive definite as it stands (a zero or NaN diagonal
    entry, or potrf fails), every block goes through :class:`Cholesky`: its diagonal shifts (``shifted``), and its
    error naming the first block it rejects."""

    def __init__(self, H: np.ndarray, what: str):
        """``what`` names block k of the stack in an error, formatted with k (``"MM block {} of the majorizer"``)."""
        #: whether a block needed :class:`Cholesky`'s diagonal shift (every block then went through it)
        self.shifted = False
        self.scale = scale = jacobi_scales(H)
        if scale is not None:
            self.factors = []
            for block, s in zip(H, scale):
                factor, info = dpotrf(block * np.outer(s, s), lower=True, overwrite_a=True, clean=False)
                if info:
                    break
                self.factors.append(factor)
            else:
                return
        blocks = [Cholesky(block, what.format(k)) for k, block in enumerate(H)]
        self.shifted = True
        self.factors, self.scale = [block.factor for block in blocks], np.stack([block.scale for block in blocks])

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """H_k⁻¹ rhs_k for every block k (``rhs``: K×D)."""
        scaled = self.scale * rhs
        for factor, part in zip(self.factors, scaled):
            part[...] = dpotrs(factor, part, lower=True)[0]
        scaled *= self.scale
        return scaled

    def inverse_sum(self, rhs: np.ndarray) -> np.ndarray:
        """Σ_k H_k⁻¹ rhs for one right-hand side ``rhs`` (D×m) of every block."""
        total = np.zeros(rhs.shape)
        for factor, scale in zip(self.factors, self.scale[:, :, None]):
            total += scale * dpotrs(factor, scale * rhs, lower=True)[0]
        return total


#: the workspace of sysv per row: its blocked factorization (the default workspace, n, runs unblocked: 2× slower at
#: 600 rows)
LDL_BLOCK = 64


def ldl_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """The solution of a symmetric system by LDLᵀ (LAPACK sysv, blocked), or None when the matrix is singular or its
    reciprocal condition estimate (sycon, 1-norm) is below the machine epsilon: what ``scipy.linalg.solve(matrix,
    rhs, assume_a="sym")`` computes and warns about, without its argument handling and the warnings filter, which
    measured 3–4× the solve on the polish's systems of 20–60 rows (one per class of a separable problem)."""
    if not (np.isfinite(matrix).all() and np.isfinite(rhs).all()):
        raise ValueError("array must not contain infs or NaNs")
    n = matrix.shape[0]
    # matrix.T: the same symmetric matrix, already in LAPACK's column order (dsysv copies it, without transposing:
    # the least-squares fallback needs ``matrix`` intact)
    factor, pivots, x, info = dsysv(matrix.T, rhs, lwork=max(1, LDL_BLOCK * n))
    if info:
        return None
    rcond, info = dsycon(factor, pivots, float(np.abs(matrix).sum(axis=0).max()))
    if info or not rcond >= EPS:
        return None
    return x


def least_change(matrix: np.ndarray, rhs: np.ndarray, guess: np.ndarray | None = None) -> np.ndarray | None:
    """The least-squares solution of a (singular) system nearest to ``guess`` (default 0), by pivoted QR (gelsd's SVD
    measured to fail to converge on such systems); None if that fails."""
    if guess is None:
        guess = np.zeros_like(rhs)
    try:
        return guess + lstsq(matrix, rhs - matrix @ guess, lapack_driver="gelsy")[0]
    except LinAlgError:
        return None


def separable(problem: Problem) -> bool:
    """Whether the problem is K independent QPs, one per class: soft w with α = 0 (P = I) and soft b with γ = 0 (the
    estimator's default with negatives, docs/theory.md §9.8). Its systems are then block diagonal by class."""
    return not problem.hard_w and problem.alpha == 0 and not problem.hard_b and problem.bias_penalty == 0


def block_pairs(bounds: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """The positions of the pairs of ``blocks`` (block k: positions bounds[k] to bounds[k + 1]), block by block."""
    return np.concatenate([np.arange(bounds[k], bounds[k + 1]) for k in blocks])


def state_objective(problem: Problem, state: "State", hinge: np.ndarray | None = None,
                    cost: np.ndarray | None = None) -> float:
    """R + Σ_p c_p h_p + B at an iterate, from its own residuals: h = [r]_+ (the exact objective F) unless another
    ``hinge`` (the smoothed one of MM) is given. The reported objective is always the evaluator's. ``cost``: the
    costs of the pairs the iterate holds, when not all the problem's (some classes of a separable problem, whose B
    is 0)."""
    cost = problem.cost if cost is None else cost
    bias = 0.0 if problem.hard_b else problem.bias_penalty * float(state.b.sum()) ** 2
    return state.reg + float(cost @ (np.maximum(state.r, 0.0) if hinge is None else hinge)) + bias


def smoothed_hinge(r: np.ndarray, eps: float) -> np.ndarray:
    """h_ε(t) = [t]_+ for |t| ≥ ε and (t + ε)²/(4ε) inside the band (docs/theory.md §9.1)."""
    out = np.maximum(r, 0.0)
    band = np.abs(r) < eps
    out[band] = (r[band] + eps) ** 2 / (4.0 * eps)
    return out


def hinge_slope(r: np.ndarray, eps: float) -> np.ndarray:
    """h'_ε(t): 0 below the band, (t + ε)/(2ε) inside it, 1 above; c_p h'_ε(r_p) is the dual estimate μ_p that the
    smoothed minimizer converges to (docs/theory.md §9.3)."""
    return np.clip((r + eps) / (2.0 * eps), 0.0, 1.0)


def next_eps(eps: float, factor: float, floor: float) -> float | None:
    """The ε continuation's next floor, ε/factor but not below ``floor``; None once ε is at the floor."""
    if eps <= floor:
        return None
    return max(eps / factor, floor)


Candidate = TypeVar("Candidate")


def backtrack(trial: Callable[[float], Candidate], value: Callable[[Candidate], float], current: float,
              max_halvings: int) -> tuple[Candidate | None, float]:
    """Backtracking along a direction: the first of the step lengths 1, ½, ¼, ... (``max_halvings`` of them) whose
    point ``trial(t)`` has a ``value`` below ``current``, and t; (None, 0.0) when none has."""
    step = 1.0
    for _ in range(max_halvings):
        candidate = trial(step)
        if value(candidate) < current:
            return candidate, step
        step /= 2.0
    return None, 0.0


#: rows of a sparse X per block of the dense product X_a X_bᵀ: bounds the sparse intermediate of each block
GRAM_BLOCK_ROWS = 512


def rows_of(X, rows=slice(None)):
    """X[rows]; the whole of X itself (a sparse X[:] would be a copy)."""
    return X if isinstance(rows, slice) and rows == slice(None) else X[rows]


def dense_gram(A, B) -> np.ndarray:
    """A Bᵀ as a dense array for dense or sparse (CSR) A and B: a sparse product A Bᵀ is formed block of rows by
    block of rows, so that no more than GRAM_BLOCK_ROWS of its rows exist in sparse form at once (a sparse result
    with every entry stored takes 12 bytes an entry, value and index, against the dense result's 8)."""
    if not sp.issparse(A):
        return A @ B.T
    out = np.empty((A.shape[0], B.shape[0]))
    Bt = B.T.tocsr()  # once: a CSR product converts its other factor to CSR
    for start in range(0, A.shape[0], GRAM_BLOCK_ROWS):
        block = slice(start, start + GRAM_BLOCK_ROWS)
        out[block] = (A[block] @ Bt).toarray()
    return out


class GramOperator:
    """Products with the training Gram matrix (G = X Xᵀ for linear problems, never formed; the kernel's G; a sparse X
    stays sparse: its products with dense coefficients are dense N×K or M×K, its pair blocks dense n×n)
    and the kernel coefficients A = M P⁺ of a dual point μ, M_{i_p k_p} = y_p μ_p (docs/theory.md §6).

    Dual points are sparse (μ_p = 0 off the support): only the rows of A of samples with a nonzero μ_p are
    formed and multiplied."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.linear = not problem.is_kernel
        self.basis = problem.X if self.linear else problem.gram
        self.pinv = problem.coupling_pinv  # a property computed on every access: once per operator
        #: the polish's solutions of a separable problem's nonsingular class blocks, by (class, the class's
        #: partition): unique, so the crossovers of one solve, which share this operator, share them too
        self.unique_blocks: dict = {}

    def pair_block(self, index) -> np.ndarray:
        """Q restricted to the pairs ``index``: Q_pq = y_p y_q P⁺_{k_p k_q} G_{i_p i_q} (docs/theory.md §9.3)."""
        pairs = self.problem.pairs
        sample, label, sign = pairs.sample[index], pairs.label[index], pairs.sign[index]
        if self.linear:
            rows = self.basis[sample]
            Q = dense_gram(rows, rows)
        else:
            Q = self.basis[np.ix_(sample, sample)]
        if label.size and (label == label[0]).all():  # one class (the polish of a separable problem): one entry
            Q *= self.pinv[label[0], label[0]]
        else:
            Q *= self.pinv[np.ix_(label, label)]
        Q *= np.outer(sign, sign)
        return Q

    def dual_coef(self, mu: np.ndarray) -> tuple[np.ndarray | slice, np.ndarray]:
        """(support, A[support]): the samples with a nonzero μ_p and their rows of A = M P⁺ (all samples,
        as a slice, when that is most of them: indexing would only copy)."""
        pairs, N = self.problem.pairs, self.problem.n_samples
        nonzero = np.flatnonzero(mu)
        row = pairs.sample[nonzero]
        support, index = support_index(N, row)
        if 2 * support.size > N:
            support, index = slice(None), row
        M = np.zeros((N if isinstance(support, slice) else support.size, self.problem.n_classes))
        M[index, pairs.label[nonzero]] = pairs.sign[nonzero] * mu[nonzero]
        return support, M @ self.pinv

    def apply(self, mu: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """(G A)[rows]: the decision values without bias of the dual point μ at those samples."""
        support, A = self.dual_coef(mu)
        if self.linear:
            return rows_of(self.basis, rows) @ (rows_of(self.basis, support).T @ A)
        return self.basis[rows][:, support] @ A

    def coef(self, mu: np.ndarray) -> np.ndarray:
        """The reported coefficients of μ: W = Xᵀ A (linear) or A itself (kernel)."""
        support, A = self.dual_coef(mu)
        if self.linear:
            return rows_of(self.basis, support).T @ A
        full = np.zeros((self.problem.n_samples, self.problem.n_classes))
        full[support] = A
        return full


class ContinuationRun(Protocol):
    """One run of a Newton engine on F̃_ε with ε continuation, as :func:`continuation` drives it: the MM phase of the
    structured forms (``phase.MMRun``) and the matrix-free form (``matrix_free.NewtonCG``)."""

    #: the iterations so far
    iterations: int
    #: why the run stops when ε is at its floor and the stage has converged uncertified
    stop_at_floor: str
    #: the floor ε of the stage, F̃_ε at the iterate and F at every iterate (the start's first)
    eps: float
    smooth: float
    history: list
    #: the report of ``verbose``
    progress: Progress

    @property
    def certified(self) -> bool:
        """Whether the run holds an answer with a proven bound within gap_tol."""

    def iterate(self) -> bool:
        """One iteration on F̃_ε (or none when the stage is already known to be done); whether the stage converged."""

    def end_stage(self) -> None:
        """What a converged stage ends with (the engine's exact finish)."""

    def refine_eps(self) -> bool:
        """Continue on the next, smaller ε; False at the floor."""

    def at_limit(self) -> None:
        """What the run does when the iteration limit ends it."""


def continuation(run: ContinuationRun, max_iter: int) -> str:
    """The template loop of both Newton engines (docs/theory.md §9.7, §9.11): iterate on F̃_ε until the stage has
    converged, end the stage, and stop once certified, else go on with a smaller ε; at the ε floor or after
    ``max_iter`` iterations stop anyway. Returns why it stopped: "certified", ``run.stop_at_floor`` or
    "max_iter". With ``run.progress``, a line per iteration (ε, F, F̃_ε) and per stage's end."""
    progress = run.progress
    while run.iterations < max_iter:
        if run.certified:
            return "certified"
        done = run.iterations
        converged = run.iterate()
        if run.iterations > done:
            progress("iteration", run.iterations, eps=run.eps, objective=run.history[-1], smoothed=run.smooth)
        if converged:
            run.end_stage()
            progress("stage end", run.iterations, eps=run.eps, certified=run.certified)
            if run.certified:
                return "certified"
            if not run.refine_eps():
                return run.stop_at_floor
    run.at_limit()
    return "max_iter"


class Stepper(Protocol):
    """One structured form of the MM iteration (the primal form's class blocks, the pair form's n×n system): what
    the MM phase, the interior point and the polish need of it."""

    form: str
    problem: Problem

    def initial(self, coef=None, b=None) -> "State":
        """The first iterate: W = 0, b = 0, or (coef, b) (a warm start, with no iterate to step back to)."""

    def step(self, z: np.ndarray) -> "State":
        """The minimizer of the quadratic majorizer at z (docs/theory.md §9.2)."""

    def newton(self, state: "State", eps: float) -> "State":
        """The generalized Newton step on F̃_ε at ``state`` (docs/theory.md §9.7)."""

    def relax(self, new: "State", old: "State", t: float = 2.0) -> "State":
        """The point old + t(new − old), in the stepper's own coordinates."""

    def solution(self, state: "State") -> tuple[np.ndarray, np.ndarray]:
        """(coef, b) of ``state`` in the reported parametrization."""


class State:
    """One MM iterate. ``params`` is the iterate in the stepper's own coordinates (a tuple of arrays,
    linear in θ so that over-relaxation is a linear combination); None for a warm start given as (coef, b).
    ``r`` are the pair residuals, ``reg`` = R(W), ``b`` the biases.

    ``reg`` may be given as a function of no arguments, called at the first read: most of an interior point's
    iterates (its predictor, a direction it steps only part of) are never evaluated (measured: R of every primal
    fit was 8 % of a profiled interior-point solve on small one-vs-rest label matrices)."""

    __slots__ = ("params", "r", "_reg", "b")

    def __init__(self, params: tuple | None, r: np.ndarray, reg: float | Callable[[], float], b: np.ndarray):
        self.params, self.r, self._reg, self.b = params, r, reg, b

    @property
    def reg(self) -> float:
        if callable(self._reg):
            self._reg = self._reg()
        return self._reg
