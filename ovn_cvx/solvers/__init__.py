"""Solver back ends, one module each, all returning :class:`ovn_cvx.SolveResult`."""
