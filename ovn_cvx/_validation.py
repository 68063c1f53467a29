"""The one scalar-argument check used by the problem model, the solvers, the estimator and the generators."""
from __future__ import annotations

import numbers

import numpy as np


def check_number(name: str, value, *, low=None, strict: bool = False, integer: bool = False):
    """``value`` as float (int when ``integer``), or a TypeError/ValueError that names the argument.

    Rejects bools, non-numbers, NaN/inf and values below ``low`` (or equal to it when ``strict``)."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be {'an integer' if integer else 'a real number'}, got {type(value).__name__}")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (strict and value == low)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {low}, got {value!r}")
    return int(value) if integer else float(value)
