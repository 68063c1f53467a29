"""The paper's own numbers, with their table and row: the one place the reports take them from.

Shajari & Rangarajan, "A Unified Framework for Multiclass and Multilabel Support Vector Machines", section
"Experiments", tables A–D (transcribed in the project brief's copy of the paper's tables). Every entry keeps
the number *as printed* (``text``), so that its rounding is known: "0.10" means [0.095, 0.105).

Names are the reproduction's: methods ``OvN`` (SwHb), ``OvR-SVC`` (one-vs-rest SVC; on two classes the binary
SVC), ``CS-LinearSVC`` (Crammer–Singer), ``BR-SVC`` (binary relevance); kernels ``linear``, ``rbf`` (the
paper's Gaussian), ``poly`` (degree 2); metrics as in :mod:`.protocols` plus ``support_vectors`` ("a/b") and
``predicted_set`` (Table A).

What can be compared is decided here, once: the paper's 2-D toys (tables A and B) and its synthetic multilabel
set are not published, so their digits are *not comparable* (our toys are our own constructions); the claims
those tables support are checked as patterns (:data:`CLAIMS`).
"""
from __future__ import annotations

from dataclasses import dataclass

PAPER_TITLE = "A Unified Framework for Multiclass and Multilabel Support Vector Machines"
PAPER_AUTHORS = "Hoda Shajari, Anand Rangarajan"

#: the paper's protocol: k-fold CV, the best mean score over the grid
PAPER_CV_FOLDS = 3


@dataclass(frozen=True)
class PaperNumber:
    """One number of the paper's tables: where it is (``table``, ``row``, ``column``) and what it measures."""

    table: str          # "A" … "D"
    row: str            # the row as the paper names it, e.g. "glass, L"
    column: str         # the column as the paper names it, e.g. "OvN SwHb"
    dataset: str        # the reproduction's data set
    kernel: str
    method: str
    metric: str
    text: str           # as printed: "0.10", "[9, 10]", "[0,1]"
    not_comparable: str | None = None   # why the digits cannot be compared with ours, or None

    @property
    def numeric(self) -> bool:
        return self.not_comparable is None and self.text[0].isdigit()

    @property
    def value(self) -> float:
        return float(self.text)

    @property
    def half_unit(self) -> float:
        """Half a unit of the last printed digit: the paper's rounding."""
        decimals = len(self.text.partition(".")[2])
        return 0.5 * 10.0 ** -decimals

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.dataset, self.kernel, self.method, self.metric


TOYS = ("the paper's 2-D toy data are not published (our toys are our own constructions): only the pattern "
        "is compared")
SYNTHETIC = "the paper's synthetic set is not described (size, features, labels, generator): ours is another set"
TABLE_A_TRAINING = ("the paper's training coordinates are not given (our set is our own construction): ours is "
                    "predicted at the paper's point, and the pattern is scored among the claims")

#: Table A as printed: test point, the intended label set, the paper's OvN (linear SwHb) and OvR predictions
TABLE_A = (("(−4, 3)", (-4.0, 3.0), "[0,1]", "[0,1]", "[1,1]"), ("(−5, 2)", (-5.0, 2.0), "[0,1]", "[0,1]", "[1,1]"),
           ("(−3, 3)", (-3.0, 3.0), "[0,1]", "[0,1]", "[1,1]"), ("(−2, 4)", (-2.0, 4.0), "[1,1]", "[1,1]", "[1,1]"),
           ("(0, 3)", (0.0, 3.0), "[1,0]", "[1,0]", "[1,0]"), ("(1, 5)", (1.0, 5.0), "[1,1]", "[1,1]", "[1,1]"))
TABLE_A_POINT_TEXT = tuple(r[0] for r in TABLE_A)
TABLE_A_POINTS = tuple(r[1] for r in TABLE_A)
TABLE_A_TRUTH, TABLE_A_OVN, TABLE_A_OVR = (tuple(r[i] for r in TABLE_A) for i in (2, 3, 4))

_KERNELS = {"L": "linear", "G": "rbf", "Gaussian": "rbf", "linear": "linear", "polynomial, degree 2": "poly"}


def _table_a():
    for point, _xy, _truth, ovn, ovr in TABLE_A:
        for column, method, text in (("OvN SwHb", "OvN", ovn), ("OvR (scikit-learn)", "BR-SVC", ovr)):
            yield PaperNumber("A", f"test point {point}", column, "unseen_labelset", "linear", method,
                              "predicted_set", text, TABLE_A_TRAINING)


def _table_b():
    rows = [("hourglass", "Gaussian", "1", "0.97", "[9, 10]", "[17, 18]"),
            ("hourglass", "polynomial, degree 2", "1", "0.99", "[5, 4]", "[8, 9]"),
            ("random", "linear", "0.95", "0.87", "[6, 6]", "[7, 7]"),
            ("moon", "Gaussian", "1", "1", "[4, 6]", "[7, 7]")]
    datasets = {"hourglass": "hourglass", "random": "random_linear", "moon": "moons"}
    for data, kernel, acc_ovn, acc_svm, sv_ovn, sv_svm in rows:
        row, ds, k = f"{data}, {kernel}", datasets[data], _KERNELS[kernel]
        yield PaperNumber("B", row, "accuracy SwHb", ds, k, "OvN", "accuracy", acc_ovn, TOYS)
        yield PaperNumber("B", row, "accuracy SVM", ds, k, "OvR-SVC", "accuracy", acc_svm, TOYS)
        yield PaperNumber("B", row, "SVs SwHb", ds, k, "OvN", "support_vectors", sv_ovn, TOYS)
        yield PaperNumber("B", row, "SVs SVM", ds, k, "OvR-SVC", "support_vectors", sv_svm, TOYS)


def _table_c():
    rows = [("glass", "L", "0.851", "0.598", "0.668"), ("glass", "G", "0.869", "0.701", None),
            ("iris", "L", "0.987", "0.960", "0.967"), ("iris", "G", "0.987", "0.967", None),
            ("wine", "L", "0.843", "0.967", "0.983"), ("wine", "G", "0.966", "0.986", None)]
    for data, kernel, ovn, ovr, cs in rows:
        for column, method, text in (("OvN SwHb", "OvN", ovn), ("OvR (scikit-learn)", "OvR-SVC", ovr),
                                     ("CS (scikit-learn)", "CS-LinearSVC", cs)):
            if text is not None:  # the paper's HL columns are 1 − accuracy: not separate claims
                yield PaperNumber("C", f"{data}, {kernel}", column, data, _KERNELS[kernel], method, "accuracy", text)


def _table_d():
    rows = [("synthetic", "L", "0.837", "0.133", "0.828", "0.14"),
            ("synthetic", "G", "0.843", "0.142", "0.867", "0.122"),
            ("scene", "L", "0.557", "0.177", "0.601", "0.10"),
            ("scene", "G", "0.652", "0.12", "0.684", "0.08"),
            ("emotions", "L", "0.494", "0.235", "0.530", "0.195"),
            ("emotions", "G", "0.50", "0.255", "0.575", "0.175")]
    for data, kernel, ovn_as, ovn_hl, br_as, br_hl in rows:
        why = SYNTHETIC if data == "synthetic" else None
        row, k = f"{data}, {kernel}", _KERNELS[kernel]
        yield PaperNumber("D", row, "OvN SwHb AS", data, k, "OvN", "example_accuracy", ovn_as, why)
        yield PaperNumber("D", row, "OvN SwHb HL", data, k, "OvN", "hamming_loss", ovn_hl, why)
        yield PaperNumber("D", row, "BR AS", data, k, "BR-SVC", "example_accuracy", br_as, why)
        yield PaperNumber("D", row, "BR HL", data, k, "BR-SVC", "hamming_loss", br_hl, why)


#: every number of the paper's tables A–D, in the paper's order
PAPER_NUMBERS: tuple[PaperNumber, ...] = (*_table_a(), *_table_b(), *_table_c(), *_table_d())

#: the reproduction table each paper table is compared with
TABLE_OF = {"A": "unseen_label", "B": "two_class", "C": "multiclass", "D": "multilabel"}


@dataclass(frozen=True)
class Claim:
    """A qualitative claim of the paper, checked as a pattern on our data (``check`` names the rule)."""

    table: str
    text: str
    check: str


CLAIMS = (
    Claim("A", "linear OvN predicts a label set that no training pattern has ([0,1]) for a point far from the "
               "patterns with both labels, where one-vs-rest (binary relevance) predicts [1,1]", "unseen_set"),
    Claim("B", "SwHb needs fewer support vectors per class than the binary SVM, with equal or better accuracy",
          "fewer_support_vectors"),
    Claim("B", "on a two-class set whose optimum is two parallel hyperplanes, SwHb gives the binary SVM's "
               "parallel hyperplanes for every α in the paper's [1, 2] (ours: [0.5, 1))", "parallel"),
)


def paper_numbers(table: str | None = None) -> list[PaperNumber]:
    """The paper's numbers, of one table ("A" … "D") or all.

    Parameters
    ----------
    table : {"A", "B", "C", "D"} or None, default=None
        The table; None for all.

    Returns
    -------
    list of PaperNumber
        The numbers.

    Examples
    --------
    >>> from ovn_cvx.experiments import paper_numbers
    >>> numbers = paper_numbers("C")
    >>> numbers[0].row, numbers[0].method, numbers[0].metric, numbers[0].text
    ('glass, L', 'OvN', 'accuracy', '0.851')
    >>> len(paper_numbers())
    67
    """
    if table is not None and table not in TABLE_OF:
        raise ValueError(f"table must be one of {sorted(TABLE_OF)}, got {table!r}")
    return [p for p in PAPER_NUMBERS if table is None or p.table == table]


def paper_value(dataset: str, kernel: str, method: str, metric: str) -> str | None:
    """The paper's number (as printed) for one of our cells, or None when the paper has none."""
    for p in PAPER_NUMBERS:
        if p.key == (dataset, kernel, method, metric):
            return p.text
    return None
