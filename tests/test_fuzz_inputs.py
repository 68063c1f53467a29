"""Every public entry point answers bad input with a ValueError or TypeError that names the argument.

Hypothesis draws odd values (wrong types, NaN/inf, fractions, huge integers, strings, ragged or 3-D arrays,
random file contents, bad command lines) for one argument at a time; the rest of the call is valid. The call
either works or raises ValueError/TypeError whose message names that argument — never another exception type
(AttributeError, IndexError, StopIteration, OverflowError, ...), never a hang (the deadline).
"""
import contextlib
import gzip
import io
import re
import warnings
from datetime import timedelta
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovn_cvx import OvNClassifier, Problem, datasets, objective, residuals, solve
from ovn_cvx.cli import main
from ovn_cvx.kkt import kkt_certificate
from ovn_cvx.testing import assert_matches_reference
from ovn_cvx.verify import bias_limit, compare, invariants, kkt_check, linear_kernel_consistency

FUZZ = settings(max_examples=40, deadline=timedelta(seconds=10), derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.5, 1.5], [1.5, 0.2], [2.5, 1.0]])
LABELS = np.array([0, 1, 2, 0, 1, 2])
Y = np.eye(3)[LABELS]
PROBLEM = Problem(X, Y)

#: odd scalars: anything a caller might pass by mistake. Finite numbers stay within ±1e6 (and 10**400, beyond
#: the float range): at β ≈ 1e15 the MM solver itself fails (LinAlgError), a numerical limit, not input checking.
SCALARS = st.one_of(
    st.none(), st.booleans(), st.text(max_size=4), st.binary(max_size=3),
    st.floats(-1e6, 1e6), st.sampled_from([np.nan, np.inf, -np.inf, 10**400]), st.integers(-10**6, 10**6),
    st.fractions(max_denominator=7), st.complex_numbers(max_magnitude=5, allow_nan=False),
    st.lists(st.integers(0, 3), max_size=2), st.just(object()), st.just(np.float32(np.nan)),
)

#: odd arrays: empty, 3-D, ragged, strings, NaN/inf, mixed kinds, wrong lengths, scalars
ARRAYS = st.one_of(
    st.sampled_from([np.zeros((0, 2)), np.zeros((6, 2, 2)), [[1.0, 2.0], [3.0]], [["a", "b"]] * 6,
                     np.full((6, 2), np.nan), np.full((6, 2), np.inf), np.ones((5, 2)), np.ones(6), "abc",
                     np.array([1, "a", 2.0, None, 1, 1], dtype=object), 3.5, None, np.ones((6, 2), dtype=complex)]),
    st.lists(st.one_of(st.floats(), st.text(max_size=2), st.none()), min_size=0, max_size=7),
)


def assert_names(call, *names):
    """``call()`` works, or raises ValueError/TypeError whose message names one of ``names``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except (ValueError, TypeError) as err:
        message = str(err)
        assert any(re.search(rf"(?<![\w]){re.escape(n)}(?!\w)", message) for n in names), \
            f"{type(err).__name__} does not name {names}: {message}"


@FUZZ
@given(name=st.sampled_from(["alpha", "beta", "bias_penalty", "gamma", "degree", "coef0"]), value=SCALARS)
def test_problem_hyperparameters(name, value):
    # an absurd but well-typed kernel parameter (degree=10**30) may only show as a non-finite kernel matrix
    assert_names(lambda: Problem(X, Y, "SwHb", "poly", **{name: value}), name, "kernel matrix")


@FUZZ
@given(name=st.sampled_from(["X", "Y", "sample_weight", "label_weight", "variant", "kernel"]),
       value=st.one_of(ARRAYS, SCALARS))
def test_problem_arrays(name, value):
    arguments = {"X": X, "Y": Y, "variant": "SwHb", "kernel": "rbf", name: value}
    assert_names(lambda: Problem(**arguments), name)


@FUZZ
@given(y=st.one_of(ARRAYS, SCALARS, st.lists(st.one_of(st.integers(0, 2), st.text(max_size=1)), min_size=6,
                                               max_size=6)))
def test_problem_from_labels(y):
    assert_names(lambda: Problem.from_labels(X, y), "y", "Y", "X and Y")


@FUZZ
@given(problem=SCALARS, coef=st.one_of(ARRAYS, SCALARS), b=st.one_of(ARRAYS, SCALARS),
       function=st.sampled_from([objective, residuals, kkt_certificate]))
def test_objective_residuals_certificate(problem, coef, b, function):
    assert_names(lambda: function(problem, np.zeros((2, 3)), np.zeros(3)), "problem")
    assert_names(lambda: function(PROBLEM, coef, np.zeros(3)), "coef")
    assert_names(lambda: function(PROBLEM, np.zeros((2, 3)), b), "b")


@FUZZ
@given(value=SCALARS, function=st.sampled_from([linear_kernel_consistency, bias_limit, compare, kkt_check,
                                                 invariants, assert_matches_reference]))
def test_verify_functions(value, function):
    assert_names(lambda: function(value), "problem", "result")


@FUZZ
@given(name=st.sampled_from(["method", "solver", "formulation", "verbose", "max_iters", "eps_abs",
                             "decrease_tol", "max_iter", "eps"]),
       value=SCALARS)
def test_solve(name, value):
    method = "mm" if name in ("decrease_tol", "max_iter", "eps") else "cvxpy"
    options = {"method": method, "solver": "SCS" if name in ("max_iters", "eps_abs") else None, name: value}
    if method == "mm":
        del options["solver"]
    assert_names(lambda: solve(PROBLEM, **options), name)


@FUZZ
@given(name=st.sampled_from(sorted(OvNClassifier._parameter_constraints)), value=SCALARS)
def test_estimator_parameters(name, value):
    assert_names(lambda: OvNClassifier(max_iter=200, **{name: value}).fit(X, LABELS), name)


@FUZZ
@given(name=st.sampled_from(["X", "y", "sample_weight"]), value=st.one_of(ARRAYS, SCALARS))
def test_estimator_fit_and_predict(name, value):
    arguments = {"X": X, "y": LABELS, "sample_weight": None, name: value}
    assert_names(lambda: OvNClassifier(max_iter=200).fit(**arguments), name, "X and y")
    if name == "X":
        fitted = OvNClassifier(max_iter=200).fit(X, LABELS)
        assert_names(lambda: fitted.predict(value), "X")


ARFF_HEAD = "@relation r\n@attribute x numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"
ARFF_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["1,0,1", "1,0", "1,0,1,1", "?,1,0", "1,?,0", "{0 1}", "{0 1, 2 1}", "{9 1}",
                              "{0 1", "'a',0,1", "x,1,1", "", "% c", "{0 1, 0 2}", "1,'0,1"]), max_size=4)
    .map(lambda rows: ARFF_HEAD + "\n".join(rows)),
    st.integers(0, len(ARFF_HEAD) + 10).map(lambda n: (ARFF_HEAD + "1,0,1\n")[:n]),
)


@FUZZ
@given(text=ARFF_TEXT, compress=st.sampled_from(["no", "gzip", "truncated gzip"]),
       n_labels=st.one_of(st.just(2), SCALARS))
def test_mulan_arff_loader(tmp_path_factory, text, compress, n_labels):
    directory = tmp_path_factory.mktemp("arff")
    data = text.encode()
    if compress != "no":
        data = gzip.compress(data)
        data = data[:len(data) // 2] if compress == "truncated gzip" else data
    path = directory / ("fuzz.arff.gz" if compress != "no" else "fuzz.arff")
    path.write_bytes(data)
    assert_names(lambda: datasets.load_mulan_arff(path, n_labels), "fuzz.arff", "n_labels")


@FUZZ
@given(subset=SCALARS, path=st.one_of(SCALARS.filter(lambda v: not isinstance(v, (str, bytes)))))
def test_bundled_loaders(subset, path):
    for loader in (datasets.load_emotions, datasets.load_scene):
        assert_names(lambda: loader(subset, return_X_y=True), "subset")
    assert_names(lambda: datasets.load_mulan_arff(path, 2), "path")


#: every option of the CLI with values it must reject while parsing (nothing runs)
CLI_OPTIONS = {
    "--formulations": ("verify", st.text(max_size=6).filter(lambda v: v not in {"SwSb", "SwHb", "HwSb", "HwHb",
                                                                               "linear", "kernel"} and "-" not in v)),
    "--out": ("compare", st.just(str(Path(__file__)))),
    "--datasets": ("reproduce", st.text(max_size=6).filter(lambda v: v not in {"iris", "wine", "glass", "moons",
                                                                             "scene"})),
    "--solver": ("reproduce", st.text(alphabet="xyz_ ", max_size=5)),
    "--seed": ("reproduce", st.one_of(st.integers(max_value=-1), st.integers(min_value=2**32), st.text(
        alphabet="ab.-", min_size=1, max_size=3)).map(str)),
    "--max-samples": ("reproduce", st.one_of(st.integers(max_value=29), st.text(alphabet="ab.", min_size=1,
                                                                                max_size=3)).map(str)),
    "--n-jobs": ("reproduce", st.one_of(st.integers(max_value=0), st.floats(allow_nan=True)).map(str)),
    "--tables": ("reproduce", st.text(alphabet="abc", max_size=4)),
}


@FUZZ
@given(option=st.sampled_from(sorted(CLI_OPTIONS)), data=st.data())
def test_cli_rejects_bad_values(option, data):
    command, values = CLI_OPTIONS[option]
    value = data.draw(values)
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(io.StringIO()) as err:
        main([command, f"{option}={value}"])
    assert exit_info.value.code == 2
    assert f"argument {option}" in err.getvalue()


def test_fraction_is_a_real_number(solved_problems):
    """A ``numbers.Real`` that NumPy's ufuncs do not take is still a number (it was a ufunc TypeError)."""
    assert Problem(X, Y, alpha=Fraction(1, 3)).alpha == pytest.approx(1 / 3)
    OvNClassifier(alpha=Fraction(1, 3), max_iter=200).fit(X, LABELS)
    assert solved_problems[-1].alpha == pytest.approx(1 / 3)
