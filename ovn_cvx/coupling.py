"""The coupling P of the weight vectors (docs/theory.md §2, §3.1): one home for α's algebra.

R(W) = ½ tr(W P Wᵀ) with P = (1−α) I + α J (soft w), whose eigenvalues are 1 − α on the centred directions 1^⊥ and
1 + (K−1)α along 1; hard w: P = I on the subspace Σ_k w_k = 0 (α dropped), whose pseudo-inverse is the centring
Π = I − J/K. Every product with P or P⁺ is written through the two eigen-parts (the centred part and the mean part)
so that nothing cancels near either end of α's interval (−1/(K−1), 1), where one eigenvalue tends to 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Coupling:
    """P for K classes: its eigenvalues, condition, products with P and P⁺ (V P, V P⁺ for V of K columns) and the
    round-off-safe square tr(V P Vᵀ)."""

    alpha: float
    n_classes: int
    hard_w: bool

    @property
    def centred(self) -> float:
        """P's eigenvalue on the centred directions: 1 − α (hard w: 1)."""
        return 1.0 if self.hard_w else 1.0 - self.alpha

    @property
    def mean(self) -> float:
        """P's eigenvalue along 1: 1 + (K−1)α (hard w: 1, the direction being excluded by Σ_k w_k = 0)."""
        return 1.0 if self.hard_w else 1.0 + (self.n_classes - 1) * self.alpha

    @property
    def off_diagonal(self) -> float:
        """α, the weight of J in P (hard w: 0)."""
        return 0.0 if self.hard_w else self.alpha

    @property
    def condition(self) -> float:
        """The condition number of P on the space the weights live in (≥ 1)."""
        return max(self.centred, self.mean) / min(self.centred, self.mean)

    @cached_property
    def matrix(self) -> np.ndarray:
        """P = (1−α) I + α J (soft w) or I (hard w)."""
        K = self.n_classes
        if self.hard_w:
            return np.eye(K)
        return (1.0 - self.alpha) * np.eye(K) + self.alpha * np.ones((K, K))

    @cached_property
    def pinv(self) -> np.ndarray:
        """P⁺ of the dual (docs/theory.md §6): P⁻¹ = Π/(1−α) + (J/K)/(1+(K−1)α) (soft w) or the centring Π (hard w)."""
        K = self.n_classes
        mean = np.full((K, K), 1.0 / K)
        centring = np.eye(K) - mean
        if self.hard_w:
            return centring
        return centring / self.centred + mean / self.mean

    def apply(self, V: np.ndarray) -> np.ndarray:
        """V P, never forming P ⊗ I."""
        if self.hard_w:
            return V.copy()
        return self.centred * V + self.alpha * V.sum(axis=1, keepdims=True)

    def apply_inverse(self, V: np.ndarray) -> np.ndarray:
        """V P⁺: V P⁻¹ (soft w) or V Π (hard w: P = I on Σ_k v_k = 0)."""
        if self.hard_w:
            return V - V.mean(axis=1, keepdims=True)
        if self.alpha == 0.0:
            return V
        shift = (1.0 / self.mean - 1.0 / self.centred) / self.n_classes
        return V / self.centred + shift * V.sum(axis=1, keepdims=True)

    def square(self, V: np.ndarray, gram=None) -> float:
        """tr(V P Vᵀ) — with ``gram`` G, tr(Vᵀ G V P) — as a sum of two squares: with V = V_c + (V1/K)1ᵀ,
        tr(V P Vᵀ) = (1−α)‖V_c‖² + (1+(K−1)α)/K ‖V1‖² (soft w; hard w: P = I). Near either end of α's interval V
        grows along the part where P is nearly singular and the direct form's terms cancel (measured: 4e-5 of
        round-off in R = 1.4e5 at α = −1/3 + 1e-8, 6.6e-4 in the matrix-free form's own evaluation). With G, both
        parts take one product with G's block on the rows of V that are not zero (the others add nothing): one pass
        over a kernel evaluated by blocks (a dual decomposition's sparse A)."""
        if self.hard_w:
            parts, weights = [V], [1.0]
        else:
            total = V.sum(axis=1, keepdims=True)
            parts, weights = [V - total / self.n_classes, total], [self.centred, self.mean / self.n_classes]
        if gram is None:
            images = parts
        else:
            rows = np.flatnonzero(np.any(V != 0, axis=1))
            if rows.size < V.shape[0]:
                parts, gram = [part[rows] for part in parts], gram[np.ix_(rows, rows)]
            with np.errstate(over="ignore"):  # a point this large has R = inf: no candidate, never a certificate
                images = np.hsplit(gram @ np.hstack(parts), np.cumsum([part.shape[1] for part in parts])[:-1])
        with np.errstate(over="ignore"):
            return sum(weight * float(np.sum(image * part)) for weight, image, part in zip(weights, images, parts))


__all__ = ["Coupling"]
