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

from .driver import solve_mm

__all__ = ["solve_mm"]
