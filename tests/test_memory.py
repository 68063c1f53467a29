"""An exact kernel problem too large for the machine's memory is refused up front, with what to do instead, before
the N×N Gram or the solver's blocks are allocated; the solver's estimate of its own peak against tracemalloc; kernel
prediction by blocks of rows."""
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification
from sklearn.metrics.pairwise import rbf_kernel

import ovn_cvx
from ovn_cvx import OvNClassifier, Problem
from ovn_cvx import _memory
from ovn_cvx.exceptions import InsufficientMemory, OvNError
from ovn_cvx.kernels import kernel_matrix
from ovn_cvx.solvers.mm.forms import kernel_peak


def _problem(n, K, kernel="rbf", negatives="none", variant="SwHb", **params):
    X, Y = make_multilabel_classification(n_samples=n, n_features=12, n_classes=K, random_state=3)
    if kernel == "precomputed":
        X = rbf_kernel(X, gamma=0.02)
    Y = np.where(Y == 1, 1.0, -1.0 if negatives == "rest" else 0.0)
    return Problem(X, Y, variant, kernel, beta=1.0, **params)


@pytest.mark.parametrize("kernel, negatives, variant, form", [
    ("rbf", "rest", "HwHb", "primal"), ("rbf", "none", "SwSb", "pair"), ("poly", "none", "SwHb", "primal"),
    ("precomputed", "rest", "HwSb", "auto")])
def test_peak_estimate_is_a_close_lower_bound(kernel, negatives, variant, form):
    """The bytes the MM solver's structured forms allocate at their peak (tracemalloc, from building the problem to
    the certified answer) are at least the estimate the memory check uses (so it never refuses what fits) and
    within 1.5× of it (so it refuses what does not)."""
    tracemalloc.start()
    try:
        problem = _problem(500, 4, kernel, negatives, variant)
        result = ovn_cvx.solve(problem, method="mm", form=form)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.success
    estimate = kernel_peak(problem, result.form)
    assert estimate <= peak <= 1.5 * estimate


@pytest.fixture
def little_memory(monkeypatch):
    """The machine as if 1 MiB were left, every allocation checked: every check refuses what needs more."""
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**20)
    monkeypatch.setattr(_memory, "CHECK_FROM", 0)


def test_exact_kernel_fit_too_large_is_refused_before_the_gram(little_memory, monkeypatch):
    """300 rows: the RBF Gram (0.7 MiB) fits, the interior-point solver's blocks do not. The fit fails with
    InsufficientMemory (a MemoryError and an OvNError, caught by type) naming the way out, without computing a kernel
    matrix; the Nyström fit of the same data goes through."""
    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel matrix was computed")

    X, Y = make_multilabel_classification(n_samples=300, n_features=12, n_classes=4, random_state=3)
    monkeypatch.setattr(ovn_cvx.problem, "kernel_matrix", no_kernel)
    with pytest.raises(InsufficientMemory, match=r"kernel_approximation='nystroem'") as caught:
        OvNClassifier(kernel="rbf", solver="mm").fit(X, Y)
    assert isinstance(caught.value, MemoryError) and isinstance(caught.value, OvNError)
    assert caught.value.available == 2**20 and caught.value.needed > 2**20
    monkeypatch.setattr(ovn_cvx.problem, "kernel_matrix", kernel_matrix)
    approx = OvNClassifier(kernel="rbf", kernel_approximation="nystroem", n_components=20, random_state=0).fit(X, Y)
    assert approx.result_.success


class _NoGram:
    """In place of ``Problem.gram`` (a non-data descriptor, as the cached property it replaces: a problem whose Gram
    is evaluated by blocks keeps that)."""

    def __get__(self, problem, owner=None):
        pytest.fail("the Gram matrix was built")


def test_dual_decomposition_fit_needs_no_gram(little_memory, monkeypatch):
    """The same 300 rows by dual decomposition (the default for an exact kernel): only kernel rows, never the N × N
    Gram matrix — neither in the solve nor in the estimator's use of the training decision values — so the fit the
    interior point could not afford goes through, certified, with the interior point's optimum."""
    X, Y = make_multilabel_classification(n_samples=300, n_features=12, n_classes=4, random_state=3)
    monkeypatch.setattr(Problem, "gram", _NoGram())
    est = OvNClassifier(kernel="rbf").fit(X, Y)
    assert est.result_.method == "smo" and est.result_.success
    monkeypatch.undo()  # the machine's memory and the Gram back, for the check
    reference = OvNClassifier(kernel="rbf", solver="mm").fit(X, Y)
    assert reference.result_.method == "mm" and reference.result_.success
    assert est.result_.objective == pytest.approx(reference.result_.objective, rel=1e-6)
    np.testing.assert_allclose(est.decision_function(X), reference.decision_function(X), atol=1e-3)


def test_polynomial_dual_decomposition_fit_needs_no_gram(little_memory, monkeypatch):
    """A polynomial kernel with coef0 ≥ 0 is PSD by construction: like the Gaussian one, its problem is checked on its
    diagonal alone, and its fit by dual decomposition goes through on the 300 rows without the N × N Gram matrix,
    certified, at the optimum of the interior point (which forms it)."""
    X, Y = make_multilabel_classification(n_samples=300, n_features=12, n_classes=4, random_state=3)
    params = {"kernel": "poly", "degree": 2, "coef0": 1.0}
    monkeypatch.setattr(Problem, "gram", _NoGram())
    est = OvNClassifier(**params).fit(X, Y)
    assert est.result_.method == "smo" and est.result_.success
    monkeypatch.undo()
    reference = OvNClassifier(solver="mm", **params).fit(X, Y)
    assert reference.result_.method == "mm" and reference.result_.success
    assert est.result_.objective == pytest.approx(reference.result_.objective, rel=1e-6)
    np.testing.assert_allclose(est.decision_function(X), reference.decision_function(X), atol=1e-3)


#: the child of :func:`test_dual_decomposition_peak_memory_in_the_process`: the growth of the process's peak resident
#: memory (``ru_maxrss``, KiB on Linux) over an RBF fit by dual decomposition with a 20 MB row cache, after a small fit
#: of the same kind has loaded the compiled loops (whose memory is not the fit's)
_PEAK_CHILD = """
import json, resource
import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
import ovn_cvx

def fit(n):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5, n_clusters_per_class=2,
                               flip_y=0.05, random_state=0)
    Y = np.where(np.eye(5)[y] == 1, 1.0, -1.0)
    problem = ovn_cvx.Problem(StandardScaler().fit_transform(X), Y, "SwHb", "rbf", beta=2.0)
    return ovn_cvx.solve(problem, "smo", cache_size=20)

fit(300)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = fit({n})
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"success": bool(result.success), "growth": 1024 * (after - before)}}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB (Linux)")
def test_dual_decomposition_peak_memory_in_the_process():
    """What tracemalloc cannot see (the compiled loops' allocations): an RBF fit by dual decomposition at N = 7 000
    (5 classes with known negatives, 68 000 pair steps, about 10 s) with ``cache_size=20`` raises the process's peak
    resident memory by less than a quarter of the 374 MiB N × N Gram matrix it never builds (measured: 44 MiB, the
    20 MB cache and the Newton system beside it)."""
    n = 7000
    root = Path(__file__).resolve().parents[1]
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    child = subprocess.run([sys.executable, "-c", _PEAK_CHILD.format(n=n)], cwd=root, env=env, capture_output=True,
                           text=True, check=True)
    measured = json.loads(child.stdout.strip().splitlines()[-1])
    assert measured["success"]
    assert 0 < measured["growth"] < 8 * n * n / 4


@pytest.mark.parametrize("kernel, params", [("sigmoid", {}), ("poly", {"coef0": -1.0})])
def test_gram_too_large_is_refused_before_it_is_built(little_memory, monkeypatch, kernel, params):
    """A kernel that can be indefinite (sigmoid, a polynomial with coef0 < 0) has its Gram built (and checked) when
    the problem is: 600 rows need 2.7 MiB: refused with the Gram's size in the message, before any kernel matrix
    exists; a precomputed Gram is the caller's and is not refused for its own size."""
    X, Y = make_multilabel_classification(n_samples=600, n_features=12, n_classes=3, random_state=3)
    monkeypatch.setattr(ovn_cvx.problem, "kernel_matrix",
                        lambda *args, **kwargs: pytest.fail("a kernel matrix was computed"))
    with pytest.raises(InsufficientMemory, match=r"600×600 training Gram matrix needs about 2\.7 MiB, more than the "
                                                  r"1\.0 MiB"):
        Problem(X, Y, kernel=kernel, **params)
    Problem(X, Y, kernel="poly", coef0=0.0)  # PSD by construction: not built
    monkeypatch.setattr(ovn_cvx.problem, "kernel_matrix", kernel_matrix)
    Problem(rbf_kernel(X), Y, kernel="precomputed")


def test_polynomial_kernel_with_negative_coef0_is_still_checked():
    """(γ⟨x, y⟩ − 1)³ is indefinite on these rows: its Gram matrix is checked whole and refused by name, where the
    same kernel with coef0 = 0 passes its diagonal check."""
    X, Y = make_multilabel_classification(n_samples=600, n_features=12, n_classes=3, random_state=3)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        Problem(X, Y, kernel="poly", coef0=-1.0)
    assert "gram" not in Problem(X, Y, kernel="poly", coef0=0.0).__dict__


@pytest.mark.parametrize("params, named", [({"degree": 400, "coef0": 10.0}, "degree=400"),
                                           ({"gamma": 1e300}, "gamma=1e\\+300"),
                                           ({"coef0": 1e200}, "coef0=1e\\+200")])
def test_overflowing_polynomial_diagonal_is_refused_by_name(little_memory, monkeypatch, params, named):
    """A polynomial kernel PSD by construction whose diagonal is beyond the float range is refused from its diagonal,
    naming the parameter, without a kernel matrix or the memory for one; just inside the range it is accepted."""
    X, Y = make_multilabel_classification(n_samples=600, n_features=12, n_classes=3, random_state=3)
    monkeypatch.setattr(ovn_cvx.problem, "kernel_matrix",
                        lambda *args, **kwargs: pytest.fail("a kernel matrix was computed"))
    with pytest.raises(ValueError, match=rf"poly kernel with .*{named}.* overflows float64"):
        Problem(X, Y, kernel="poly", **params)
    largest = 0.01 * np.einsum("ij,ij->i", X, X).max()  # γ max‖x‖² at gamma=0.01
    degree = int(np.log(np.finfo(np.float64).max) / np.log(largest + 1.0))
    Problem(X, Y, kernel="poly", gamma=0.01, degree=degree, coef0=1.0)
    with pytest.raises(ValueError, match=rf"degree={degree + 1},"):
        Problem(X, Y, kernel="poly", gamma=0.01, degree=degree + 1, coef0=1.0)


def test_linear_problems_are_not_checked(little_memory):
    """The check is the kernel forms': a linear problem's structured systems are bounded by the form choice
    (matrix-free beyond 1 GiB)."""
    X, Y = make_multilabel_classification(n_samples=300, n_features=12, n_classes=4, random_state=3)
    assert OvNClassifier().fit(X, Y).result_.success


@pytest.mark.skipif(not os.path.exists("/proc/meminfo"), reason="Linux's /proc/meminfo")
def test_available_memory_is_within_the_machine():
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 0 < _memory.available_memory() <= total


def test_cgroup_limit_caps_available_memory(tmp_path, monkeypatch):
    """In a container the cgroup's limit less its usage caps what the host reports; "max" means no limit; where
    nothing is known nothing is checked."""
    limit, usage = tmp_path / "memory.max", tmp_path / "memory.current"
    limit.write_text("3000000\n")
    usage.write_text("1000000\n")
    monkeypatch.setattr(_memory, "_CGROUPS", ((str(limit), str(usage)),))
    host = _memory.available_memory()
    assert host is not None and host <= 2_000_000
    monkeypatch.setattr(_memory, "Path", lambda path: tmp_path / "absent" if "meminfo" in str(path)
                        else type(tmp_path)(path))
    assert _memory.available_memory() == 2_000_000
    limit.write_text("max\n")
    assert _memory.available_memory() is None
    _memory.check_fits(10**30, "anything", "nothing to do")  # unknown: not refused
    limit.write_text("3000000\n")
    _memory.check_fits(_memory.CHECK_FROM - 1, "anything", "nothing to do")  # small: not checked
    with pytest.raises(InsufficientMemory):
        _memory.check_fits(_memory.CHECK_FROM, "anything", "nothing to do")


@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_prediction_by_blocks_of_rows(monkeypatch, sparse):
    """Decision values of many new rows are computed by blocks of at most KERNEL_BLOCK kernel entries (here 7 rows'
    worth, the last block shorter): the same values as scikit-learn's RBF kernel on all rows at once, dense or
    sparse input, and no kernel block larger than the limit."""
    import scipy.sparse as sp

    from ovn_cvx import kernels as kernels_module

    X, Y = make_multilabel_classification(n_samples=80, n_features=12, n_classes=3, random_state=3)
    est = OvNClassifier(kernel="rbf", gamma=0.05).fit(X, Y)
    predictor = est.result_.predictor
    monkeypatch.setattr(kernels_module, "KERNEL_BLOCK", 7 * predictor.support.size)
    shapes = []

    def spy(*args, **kwargs):
        block = kernel_matrix(*args, **kwargs)
        shapes.append(block.shape)
        return block

    monkeypatch.setattr(kernels_module, "kernel_matrix", spy)
    X_new = np.random.default_rng(0).poisson(2.0, size=(50, 12)).astype(float)
    values = predictor.decision_function(sp.csr_matrix(X_new) if sparse else X_new)
    expected = rbf_kernel(X_new, X[predictor.support], gamma=0.05) @ predictor.coef + predictor.b
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)
    assert [rows for rows, _ in shapes] == [7] * 7 + [1]


def test_no_primal_retry_that_would_not_fit(monkeypatch):
    """"auto" re-solves an uncertified pair-form answer in primal form (an RBF kernel on 1-D data, whose Gram is
    nearly singular: tests/solvers/test_mm_soundness.py) only where the primal form fits: with room for the pair
    form (13 kB) and not the primal one (31 kB) the honest pair-form answer is returned, not an InsufficientMemory
    raised after it was found."""
    rng = np.random.default_rng(8)
    problem = Problem.from_labels(rng.normal(size=(18, 1)), np.arange(18) % 2, "HwSb", "rbf",
                                  beta=float(rng.uniform(1, 6)))
    assert kernel_peak(problem, "pair") < 20_000 < kernel_peak(problem, "primal")
    monkeypatch.setattr(_memory, "available_memory", lambda: 20_000)
    monkeypatch.setattr(_memory, "CHECK_FROM", 0)
    result = ovn_cvx.solve(problem, "mm")
    assert result.form == "pair" and not result.success and "pair_attempt" not in result.info
    assert result.status == "inaccurate"
