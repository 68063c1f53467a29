"""The verification suite as a qpbenchmark test set: the 32 problems of ``ovn_cvx.verify.DEFAULT_SUITE`` (8 data
sets × the eight formulations), each exported as explicit sparse QP data by ``ovn_cvx.qp.export``.

Run by hand with qpbenchmark (``pip install qpbenchmark``: not a dependency of ovn_cvx; it brings pyarrow):

    qpbenchmark benchmarks/ovn_cvx_suite.py --results-path /tmp/ovn_qpb/ovn_cvx_suite.csv run --author NAME

qpbenchmark loads this file by its name (class ``OvnCvxSuite``), runs every installed qpsolvers back end at its
settings ("default", "low_accuracy", "mid_accuracy", "high_accuracy") and writes its own CSV and Markdown report
next to ``--results-path``. What it judges is its own: primal and dual residuals and the duality gap of each QP
solution at the settings' tolerances. It does not know the certified reference, the KKT certificate in (coef, b),
nor MM (not a QP back end): for those, ``ovn-cvx compare`` (which also runs ``qpsolvers:BACKEND`` on the same
exported QP).
"""
from __future__ import annotations

import qpbenchmark

from ovn_cvx.qp import export
from ovn_cvx.verify.runner import formulation_name
from ovn_cvx.verify.suite import DEFAULT_SUITE


class OvnCvxSuite(qpbenchmark.TestSet):
    """ovn_cvx's default verification suite as QPs in x = (vec Z, b, ξ)."""

    @property
    def description(self) -> str:
        return ("The OvN multiclass/multilabel SVM (linear and kernel × SwSb, SwHb, HwSb, HwHb) on the 8 data sets of "
                "ovn_cvx's default verification suite, exported by ovn_cvx.qp.export.")

    @property
    def title(self) -> str:
        return "ovn_cvx verification suite"

    @property
    def sparse_only(self) -> bool:
        return True  # exported as scipy CSC matrices: only back ends with a sparse API

    def __iter__(self):
        for case in DEFAULT_SUITE:
            for variant, problem in case.problems():
                qp = export(problem)
                yield qpbenchmark.Problem(qp.P, qp.q, qp.G, qp.h, qp.A, qp.b, qp.lb, qp.ub,
                                          name=f"{case.name}_{formulation_name(case.kernel, variant)}")
