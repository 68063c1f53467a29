"""The private scikit-learn names the package needs, in one place (scikit-learn has no public equivalent of them).

* ``fit_context``: scikit-learn's ``base._fit_context`` (validate the estimator's ``_parameter_constraints`` when
  ``fit`` starts, skip the nested estimators' checks); without it, the same through the public
  ``sklearn.config_context`` and ``BaseEstimator._validate_params``.
* ``HasMethods``, ``Interval``, ``StrOptions``: the constraint types of ``_parameter_constraints``, which scikit-learn
  reads with its own ``_validate_params`` (they exist together or not at all).
* ``SigmoidCalibration``: Platt's sigmoid P(y = 1 | f) = 1 / (1 + exp(a f + b)) as ``CalibratedClassifierCV`` fits it
  (``calibration._SigmoidCalibration``); without it, :class:`PlattSigmoid`, the same fit (Platt's smoothed
  targets, the log-loss minimized by L-BFGS), tested against scikit-learn's.

The other helpers the estimator once took from scikit-learn's private modules (``_safe_split``,
``_check_sample_weight``) are written in the estimator's own modules on public API.
"""
from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn import config_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions


class PlattSigmoid:
    """Platt's sigmoid calibration (Platt 1999, with Lin, Lin & Weng's targets): ``fit(f, y, sample_weight)`` sets
    ``a_``, ``b_``; ``predict(f)`` = 1 / (1 + exp(a_ f + b_))."""

    def fit(self, values, member, sample_weight=None):
        f = np.asarray(values, dtype=np.float64).ravel()
        y = np.asarray(member, dtype=np.float64).ravel()
        largest = np.abs(f).max(initial=0.0)
        scale = largest if largest >= 30.0 else 1.0  # large values scaled into range, as scikit-learn does
        f = f / scale
        w = np.ones_like(f) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        positives, negatives = w @ (y > 0), w @ (y <= 0)
        target = np.where(y > 0, (positives + 1.0) / (positives + 2.0), 1.0 / (negatives + 2.0))

        def loss(ab):
            z = -(ab[0] * f + ab[1])  # log P = log σ(z), log(1 − P) = log σ(−z)
            p = expit(z)
            value = -w @ (target * log_expit(z) + (1.0 - target) * log_expit(-z))
            gradient = w * (p - target)  # d value / d z
            return value, np.array([-gradient @ f, -gradient.sum()])

        start = np.array([0.0, np.log((negatives + 1.0) / (positives + 1.0))])
        a, self.b_ = minimize(loss, start, jac=True, method="L-BFGS-B",
                              options={"gtol": 1e-6, "ftol": 64 * np.finfo(float).eps}).x
        self.a_ = a / scale
        return self

    def predict(self, values):
        return expit(-(self.a_ * np.asarray(values, dtype=np.float64) + self.b_))


try:
    from sklearn.calibration import _SigmoidCalibration as SigmoidCalibration
except ImportError:  # pragma: no cover - a scikit-learn release without it
    SigmoidCalibration = PlattSigmoid


def _own_fit_context(*, prefer_skip_nested_validation: bool):
    """``fit`` decorated to check the estimator's parameters first, then run with nested validation skipped."""
    def decorator(fit):
        @functools.wraps(fit)
        def wrapper(estimator, *args, **kwargs):
            estimator._validate_params()
            with config_context(skip_parameter_validation=prefer_skip_nested_validation):
                return fit(estimator, *args, **kwargs)
        return wrapper
    return decorator


try:
    from sklearn.base import _fit_context as fit_context
except ImportError:  # pragma: no cover - a scikit-learn release without it
    fit_context = _own_fit_context


__all__ = ["HasMethods", "Interval", "PlattSigmoid", "SigmoidCalibration", "StrOptions", "fit_context"]
