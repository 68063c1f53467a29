"""The private scikit-learn names the package needs, in one place (scikit-learn has no public equivalent of them).

* ``fit_context``: scikit-learn's ``base._fit_context`` (validate the estimator's ``_parameter_constraints`` when
  ``fit`` starts, skip the nested estimators' checks); without it, the same through the public
  ``sklearn.config_context`` and ``BaseEstimator._validate_params``.
* ``HasMethods``, ``Interval``, ``StrOptions``: the constraint types of ``_parameter_constraints``, which scikit-learn
  reads with its own ``_validate_params`` (they exist together or not at all).

The other helpers the estimator once took from scikit-learn's private modules (``_safe_split``,
``_check_sample_weight``, the sigmoid calibrator ``calibration._SigmoidCalibration``) are written in the package's
own modules on public API (Platt's sigmoid: ``ovn_cvx.rules.platt_sigmoids``).
"""
from __future__ import annotations

import functools

from sklearn import config_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions


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


__all__ = ["HasMethods", "Interval", "StrOptions", "fit_context"]
