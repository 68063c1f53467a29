"""The argument checks shared by the problem model, the solvers, the estimator, the generators and the loaders."""
from __future__ import annotations

import numbers
import re
from contextlib import contextmanager

import numpy as np
from sklearn.utils.validation import check_array


def check_number(name: str, value, *, low=None, strict: bool = False, integer: bool = False):
    """``value`` as float (int when ``integer``), or a TypeError/ValueError that names the argument.

    Accepts every ``numbers.Real`` (``fractions.Fraction`` too); rejects bools, non-numbers, NaN/inf and
    values below ``low`` (or equal to it when ``strict``)."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be {'an integer' if integer else 'a real number'}, got {type(value).__name__}")
    try:
        finite = np.isfinite(float(value))
    except OverflowError:  # an int or Fraction beyond the float range
        finite = False
    if not finite:
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (strict and value == low)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {low}, got {value!r}")
    return int(value) if integer else float(value)


def float_array(value, name: str, *, accept_sparse=False, ensure_2d: bool = True) -> np.ndarray:
    """scikit-learn's ``check_array(value, dtype=np.float64, input_name=name, accept_sparse=..., ensure_2d=...)``;
    an array that passes its checks as it is — a dense float64 ndarray, 2-D (1-D too with ``ensure_2d=False``), not
    empty, finite — is returned without them (about 60 µs a call; a fit with its internal folds checks its arrays
    dozens of times)."""
    dims = (2,) if ensure_2d else (1, 2)
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim in dims and value.size \
            and np.isfinite(value).all():
        return value
    return check_array(value, dtype=np.float64, input_name=name, accept_sparse=accept_sparse, ensure_2d=ensure_2d)


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """Sample weights as a float array of n_samples non-negative finite values, not all zero (None: ones; a number:
    that weight for every row); a ValueError naming ``sample_weight`` otherwise."""
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Real):
        w = np.full(n_samples, check_number("sample_weight", sample_weight, low=0.0))
    else:
        with naming("sample_weight"):
            w = float_array(sample_weight, "sample_weight", ensure_2d=False)
        if w.shape != (n_samples,):
            raise ValueError(f"sample_weight must have shape ({n_samples},), one weight per sample, got {w.shape}")
        if (w < 0).any():
            raise ValueError("sample_weight must be non-negative, got a negative weight")
    if not w.any():
        raise ValueError("sample_weight must have at least one nonzero weight, got all zero")
    return w


def check_no_dates(name: str, X) -> None:
    """A TypeError naming ``name`` when the array (or a column of the DataFrame) ``X`` holds dates or durations
    (datetime64, timedelta64): as numbers they count days, seconds or nanoseconds after 1970 depending on the storage
    unit, and the model (not scale-invariant: its regularization) would depend on that unit."""
    dtypes = getattr(X, "dtypes", None)  # a DataFrame's columns
    dtypes = [getattr(X, "dtype", None)] if dtypes is None or isinstance(dtypes, np.dtype) else list(dtypes)
    temporal = [str(dtype) for dtype in dtypes if getattr(dtype, "kind", None) in ("M", "m")]
    if temporal:
        raise TypeError(f"{name} holds dates or durations ({temporal[0]}); convert them to numbers in a unit of your "
                        f"choice first, e.g. (dates - dates.min()) / np.timedelta64(1, 'D') for days")


def check_instance(name: str, value, cls: type):
    """``value`` itself, or a TypeError that names the argument when it is not a ``cls``."""
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be an ovn_cvx.{cls.__name__}, got {type(value).__name__}")
    return value


@contextmanager
def naming(name: str):
    """Re-raise the ValueError/TypeError (an OverflowError as ValueError) of a scikit-learn or NumPy check of the
    argument ``name`` with the name in front when the message does not say it ("could not convert string to
    float: 'a'")."""
    try:
        yield
    except (ValueError, TypeError, OverflowError) as err:
        if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", str(err)):
            raise
        raise (TypeError if isinstance(err, TypeError) else ValueError)(f"{name}: {err}") from err


def encode_labels(y, name: str = "y"):
    """``(classes, codes)`` of 1-D labels ``y`` (``np.unique``), or a TypeError naming ``name`` when the labels
    mix types that cannot be ordered (strings and numbers)."""
    try:
        return np.unique(y, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in np.ravel(y)})
        raise TypeError(f"{name} must hold labels of one kind (all strings or all numbers), got a mix of "
                        f"{', '.join(kinds)}") from None
