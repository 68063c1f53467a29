"""The primal form's structured solve (docs/theory.md §9.2) for small class blocks, the class loop vectorized.

On tiny problems (iris, wine, glass: n ≈ 150–300 pairs, d + 1 ≤ 14) an interior-point iteration of
:class:`~.primal.PrimalStepper` is dozens of calls on 10×10 matrices per class, and Python's overhead per call, not
arithmetic, sets its cost (~1 ms an iteration on glass, K = 6, d + 1 = 10: over 16–18 iterations about ECOS's
whole solve). Here the K class blocks are one K×D×D stack: the Jacobi equilibration, the positive-definiteness
test (a batched Cholesky), the inverses' sum of the coupling and the block solves are one call each, and so are the
pairs' products with θ and the fits' right-hand sides (by the primal stepper's shared rows where the classes share
them); the weighted Grams stay one BLAS product per class. The
mathematics is that of :class:`~.primal.PrimalSystem` (the same equilibrated blocks, the same coupling system);
only the block solves use LU with partial pivoting instead of the Cholesky factor, backward stable as well on a
symmetric positive definite matrix. A block that is not numerically positive definite goes to
:class:`~.primal.PrimalSystem`, whose diagonal shifts and errors handle it.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ...problem import class_sums
from .common import jacobi_scales
from .primal import PrimalStepper, PrimalSystem

#: the batched form is used when the class blocks are at most this size (d + 1): measured per interior-point
#: iteration against the per-class form, glass (K = 6, D = 10) 0.94 against 1.29 ms, iris (3, 5) 0.80 against
#: 0.93, wine (3, 14) and breast_cancer (2, 31) even, emotions (6, 73) 7.9 against 4.7 (the batched LU solves)
MAX_BLOCK = 16


def batchable(problem, features) -> bool:
    """Whether the batched form applies: dense features, small blocks, every class with a pair."""
    if not isinstance(features, np.ndarray) or features.shape[1] + 1 > MAX_BLOCK:
        return False
    return bool(np.all(np.diff(problem.pairs.class_bounds(problem.n_classes)) > 0))


class BatchedPrimalStepper(PrimalStepper):
    """:class:`~.primal.PrimalStepper` with the class loop of the interior point's systems and fits vectorized."""

    @cached_property
    def all_rows(self) -> np.ndarray:
        """φ̃_p = (φ_{i_p}; 1) of every pair (n×D), in class order: ``rows`` are its per-class views (not formed
        when the classes share their rows, :attr:`~.primal.PrimalStepper.shared_rows`)."""
        pairs = self.problem.pairs
        return np.hstack([self.features[pairs.sample], np.ones((len(pairs), 1))])

    @cached_property
    def rows(self) -> list:
        if self.shared_rows is not None:
            return super().rows
        return [self.all_rows[s] for s in self.slices]

    @cached_property
    def labels(self) -> np.ndarray:
        """The block of every pair (its class; the pairs are sorted by class)."""
        return np.repeat(np.arange(self.K), np.diff(self.bounds))

    def window(self, classes: np.ndarray, state):
        window, state = super().window(classes, state)
        window.__dict__.pop("labels", None)
        if self.shared_rows is None:  # the window's own rows, its per-class views formed from them
            window.all_rows = self.all_rows[window.taken]
            del window.rows
        return window, state

    @cached_property
    def every(self) -> np.ndarray:
        """The indices of the D coordinates (the blocks' diagonal)."""
        return np.arange(self.d + 1)

    # the pairs' products in one call; shared rows keep the primal stepper's one matrix product (measured on the
    # estimator's class-label default: glass 24 → 14 ms a solve, iris 7.3 → 6.0, wine 6.2 → 5.3)
    def pair_values(self, theta: np.ndarray) -> np.ndarray:
        if self.shared_rows is not None:
            return super().pair_values(theta)
        return np.einsum("pd,pd->p", self.all_rows, theta[self.labels])

    def class_products(self, values: np.ndarray) -> np.ndarray:
        if self.shared_rows is not None:
            return super().class_products(values)
        return class_sums(self.all_rows * values[:, None], self.bounds)

    def system(self, omega, hessians=None, still=None):
        if hessians is None:  # one BLAS product per class (stacked outer products measured 1.1–2.5× slower)
            hessians = self.hessians(omega, still)
        return BatchedSystem.build(self, hessians, omega)


class BatchedSystem(PrimalSystem):
    """The factored system of :class:`~.primal.PrimalSystem` with the K blocks as one equilibrated stack."""

    @classmethod
    def build(cls, stepper: BatchedPrimalStepper, hessians: np.ndarray, omega):
        """The batched system, or :class:`~.primal.PrimalSystem` (diagonal shifts, its errors) when a block is not
        numerically positive definite or its LU breaks down."""
        H = hessians.copy()
        H[:, stepper.diag, stepper.diag] += stepper.centred
        scale = jacobi_scales(H)
        if scale is not None:
            H *= scale[:, :, None] * scale[:, None, :]
            # LU can meet an exactly zero pivot after Cholesky passed (measured: an interior point run far past its
            # optimum, glass, SwSb, α = 0, β = 100): the per-class system then decides too
            try:
                np.linalg.cholesky(H)
                with np.errstate(all="ignore"):  # LU's pivots on a nearly singular block (measured: α = 1 − 1e-8)
                    inverse = np.linalg.inv(H)
            except np.linalg.LinAlgError:
                pass
            else:
                if np.isfinite(inverse).all():
                    return cls(stepper, H, scale, inverse, omega)
        return PrimalSystem(stepper, hessians, omega)

    def __init__(self, stepper, equilibrated, scale, inverse, omega):  # noqa: D107 — use :meth:`build`
        self.stepper, self.omega = stepper, omega
        self.equilibrated, self.scale = equilibrated, scale
        self.coupling_matrix = None  # a separable problem (no coupled coordinate: q = 0): the block solves alone
        if stepper.e.any():
            system = np.einsum("ki,kij,kj->ij", scale, inverse, scale) * stepper.e
            system[stepper.every, stepper.every] += stepper.free
            self.coupling_matrix = system

    def _block_solve(self, g: np.ndarray) -> np.ndarray:
        """H_k⁻¹ g_k for every k (g: K×D)."""
        return self.scale * np.linalg.solve(self.equilibrated, (self.scale * g)[..., None])[..., 0]

    def solve(self, g: np.ndarray) -> np.ndarray:
        h = self._block_solve(g)
        if self.coupling_matrix is None:
            return h
        x = np.linalg.solve(self.coupling_matrix, h.sum(axis=0))
        q = self.stepper.e * x
        return h - self._block_solve(q[None, :])  # broadcast over the blocks
