"""Loaders of the bundled benchmark data (checksummed, no network) and of any Mulan-format ARFF file."""
from __future__ import annotations

import gzip
import hashlib
import io
import re
import zlib
from pathlib import Path

import numpy as np
import sklearn.datasets
from scipy.io import arff
from sklearn.utils import Bunch

from .._validation import naming

DATA_DIR = Path(__file__).parent / "data"

#: sha256 of every bundled file as stored (for the .gz files: of the compressed file). The values are the
#: ones published with the shared copies (tsoumakas/mulan and UCI Glass; provenance in ``data/README.md``).
CHECKSUMS = {
    "emotions-train.arff": "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
    "emotions-test.arff": "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
    "scene-train.arff.gz": "b95b8cb382db2dd6a9161b7030c229ea8582921b48c68317d062435235b3472c",
    "scene-test.arff.gz": "833905e318ac1bd51507f3e452cc57d76e896eb5f9e2a8d4a6008694fd85fd46",
    "glass.data": "dd67373f4baf2807345df02cbfef2093d342e61ad0d82a4fb79af43ef8ce449d",
    "glass.names": "5921d4b93ed323aa092a2c17cc0bab3bafbf66b7085f5d98880d9c5ea0c51d42",
}

SUBSETS = ("all", "train", "test")

MULAN_CITATION = ("G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek, I. Vlahavas. MULAN: A Java Library for "
                  "Multi-Label Learning. Journal of Machine Learning Research 12:2411-2414, 2011. Files from "
                  "github.com/tsoumakas/mulan, commit 43f6389095ad71984264db4387a8074b22bc7d4a, "
                  "data/multi-label/.")
EMOTIONS_CITATION = ("K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas. Multi-label classification of music "
                     "into emotions. Proc. 9th International Conference on Music Information Retrieval (ISMIR "
                     "2008), Philadelphia, pp. 325-330, 2008.")
SCENE_CITATION = ("M. R. Boutell, J. Luo, X. Shen, C. M. Brown. Learning multi-label scene classification. "
                  "Pattern Recognition 37(9):1757-1771, 2004.")
GLASS_CITATION = ("UCI Machine Learning Repository, 'Glass Identification' (B. German, Home Office Forensic "
                  "Science Service; donor V. Spiehler, 1987). D. Dua and C. Graff, UCI Machine Learning "
                  "Repository, University of California, Irvine, 2019. Copy from github.com/iforgotmylogin/"
                  "MachineLearning, commit 999e0cb41bad6192109282866562b11486f16045, data/glass.data.")


class ChecksumError(OSError):
    """A data file does not have the expected sha256: it is corrupted or not the published file.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ovn_cvx.datasets import ChecksumError, load_mulan_arff
    >>> text = '''@relation toy
    ... @attribute x numeric
    ... @attribute label {0,1}
    ... @data
    ... 1.0,1
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "toy.arff"
    ...     _ = path.write_text(text)
    ...     try:
    ...         load_mulan_arff(path, n_labels=1, sha256="0" * 64)
    ...     except ChecksumError as err:
    ...         print("rejected:", "expected 000" in str(err))
    rejected: True
    """


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_verified(path: Path, sha256: str | None) -> bytes:
    data = path.read_bytes()
    if sha256 is not None and _sha256(data) != sha256:
        raise ChecksumError(f"{path} has sha256 {_sha256(data)}, expected {sha256}: the file is corrupted "
                            "or is not the published one")
    return data


def _bundled(name: str, data_dir) -> bytes:
    directory = DATA_DIR if data_dir is None else Path(data_dir)
    return _read_verified(directory / name, CHECKSUMS[name])


def _text(data: bytes, source: str) -> str:
    """The text of a file (gunzipped when its name ends in .gz), or a ValueError naming it."""
    if source.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:  # not gzip, truncated, corrupt
            raise ValueError(f"{source} is not a readable gzip file ({type(err).__name__}: {err})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{source} is not UTF-8 text (byte {err.start}: {err.reason})") from None


#: ARFF values, each followed by a comma or the end of the line: quoted ('…' or "…") or bare; in a sparse row
#: "<index> <value>"
_QUOTED = r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\""""
_DENSE = re.compile(rf"""\s*(?:{_QUOTED}|([^,'"]*?))\s*(,|$)""")
_SPARSE = re.compile(rf"""\s*(\d+)\s+(?:{_QUOTED}|([^,'"\s]+))\s*(,|$)""")
_UNSUPPORTED_ATTRIBUTE = re.compile(r"""\s*@attribute\s+(?:'[^']*'|"[^"]*"|\S+)\s+(string|relational)\b""", re.I)


def _split(pattern: re.Pattern, text: str, where: str) -> list[tuple[str, ...]]:
    """The groups of the matches of ``pattern`` one after the other in ``text``, quotes removed."""
    out, pos = [], 0
    while True:
        match = pattern.match(text, pos)
        if match is None:
            raise ValueError(f"{where}: cannot read the values from {text[pos:pos + 40]!r} (a stray quote, or a "
                             "sparse entry that is not '<index> <value>')")
        *head, single, double, bare, separator = match.groups()
        out.append((*head, next(v for v in (single, double, bare) if v is not None)))
        if not separator:
            return out
        pos = match.end()


def _arff_header(lines: list[str], source: str):
    """``(meta, index of the first data line)``: the header up to @data, parsed by ``scipy.io.arff``."""
    start = next((i for i, line in enumerate(lines) if line.strip().lower().startswith("@data")), None)
    if start is None:
        empty = not any(line.strip() for line in lines)
        raise ValueError(f"{source} is not an ARFF file: {'it is empty' if empty else 'it has no @data line'}")
    try:
        _, meta = arff.loadarff(io.StringIO("\n".join(lines[:start + 1]) + "\n"))
    except (NotImplementedError, arff.ArffError, ValueError, StopIteration) as err:
        where = next((f"line {i + 1}" for i, line in enumerate(lines[:start])
                      if _UNSUPPORTED_ATTRIBUTE.match(line)), f"header (lines 1-{start + 1})")
        raise ValueError(f"{source}, {where}: cannot read the ARFF header ({err or type(err).__name__}); "
                         "numeric and nominal attributes are supported") from None
    return meta, start + 1


def _arff_rows(lines: list[str], first: int, meta, source: str) -> tuple[np.ndarray, list[int]]:
    """The data rows, dense or sparse, as an (n, attributes) array of strings ("?": missing) and their line
    numbers. A sparse row ``{index value, ...}`` leaves out the attributes at their default: 0 for a numeric
    attribute, the first declared value for a nominal one."""
    names = meta.names()
    defaults = ["0" if meta[name][0] != "nominal" else meta[name][1][0] for name in names]
    rows, numbers = [], []
    for number, line in enumerate(lines[first:], start=first + 1):
        line = line.strip()
        if not line or line.startswith("%"):
            continue
        where = f"{source}, line {number}"
        if line.startswith("{"):
            if not line.endswith("}"):
                raise ValueError(f"{where}: a sparse row must end with '}}'")
            row = list(defaults)
            entries = _split(_SPARSE, line[1:-1], where) if line[1:-1].strip() else []
            for index, value in entries:
                if int(index) >= len(names):
                    raise ValueError(f"{where}: attribute index {index} is beyond the {len(names)} attributes")
                row[int(index)] = value
            if len({index for index, _ in entries}) < len(entries):
                raise ValueError(f"{where}: an attribute index is given twice")
        else:
            row = [value for (value,) in _split(_DENSE, line, where)]
            if len(row) != len(names):
                raise ValueError(f"{where}: {len(row)} values, the header declares {len(names)} attributes")
        rows.append(row)
        numbers.append(number)
    if not rows:
        raise ValueError(f"{source} has no data rows")
    return np.array(rows, dtype=str), numbers


def _parse_mulan(text: str, n_labels: int, source: str):
    lines = text.splitlines()
    meta, first = _arff_header(lines, source)
    names = list(meta.names())
    if not isinstance(n_labels, (int, np.integer)) or isinstance(n_labels, bool) \
            or not 1 <= n_labels < len(names):
        raise ValueError(f"n_labels must be an integer in [1, {len(names) - 1}] for {source} "
                         f"({len(names)} attributes), got {n_labels!r}")
    feature_names, label_names = names[:-n_labels], names[-n_labels:]
    for name in names:
        kind, values = meta[name]
        if name in label_names and (kind != "nominal" or set(values) != {"0", "1"}):
            raise ValueError(f"label attribute {name!r} of {source} must be nominal {{0,1}} (Mulan format: the "
                             f"labels are the last n_labels attributes), got {kind} {values}")
        if kind not in ("numeric", "nominal"):
            raise ValueError(f"feature {name!r} of {source} is a {kind} attribute; only numeric features are "
                             "supported")
    table, numbers = _arff_rows(lines, first, meta, source)

    def check(ok, j, message):
        if not ok.all():
            i = int(np.argmin(ok))
            raise ValueError(f"{source}, line {numbers[i]}: {message}, got {str(table[i, j])!r}")

    X = np.empty((len(numbers), len(feature_names)))
    for j, name in enumerate(feature_names):
        kind, values = meta[name]
        column = np.where(table[:, j] == "?", "nan", table[:, j])  # missing features are NaN
        if kind == "nominal":
            check(np.isin(table[:, j], (*values, "?")), j, f"attribute {name!r} must be one of {values}")
        try:
            X[:, j] = column.astype(np.float64)
        except ValueError:
            if kind == "nominal":  # a nominal attribute with numeric values (e.g. {0,1}) is a number
                raise ValueError(f"feature {name!r} of {source} is nominal with non-numeric values "
                                 f"{values}; only numeric features are supported") from None
            check(np.array([_is_number(v) for v in column]), j, f"attribute {name!r} must be numeric")
    Y = table[:, len(feature_names):]
    for j, name in enumerate(label_names):
        check(np.isin(Y[:, j], ("0", "1")), len(feature_names) + j, f"label {name!r} must be 0 or 1 (not missing)")
    return X, (Y == "1").astype(np.int64), feature_names, label_names


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _result(X, Y, feature_names, target_names, descr, return_X_y, **extra):
    if return_X_y:
        return X, Y
    return Bunch(data=X, target=Y, feature_names=list(feature_names), target_names=list(target_names),
                 DESCR=descr, **extra)


def load_mulan_arff(path, n_labels: int, *, sha256: str | None = None, return_X_y: bool = False):
    """Load a multilabel data set in Mulan's ARFF format (dense or sparse ARFF, optionally gzip-compressed).

    In the Mulan format the labels are the **last** ``n_labels`` attributes, each nominal {0,1}; the other
    attributes are the features (numeric, or nominal with numeric values). The header is parsed with
    ``scipy.io.arff``, the rows here: dense rows, and sparse rows ``{index value, ...}`` (most Mulan sets),
    whose omitted attributes are 0 (a nominal one: its first value). Missing feature values ("?") become NaN; a missing
    label is an error, and so is every row that does not fit the header: a ValueError naming the file and the line.

    Parameters
    ----------
    path : str or Path
        ``.arff`` or ``.arff.gz`` file.
    n_labels : int
        L, the number of label attributes (Mulan lists them in the data set's ``.xml`` file).
    sha256 : str, optional
        Expected sha256 of the file as stored; :class:`ChecksumError` if it differs.
    return_X_y : bool
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    Bunch with ``data`` (n, M) float64, ``target`` (n, L) int64 0/1 indicator matrix, ``feature_names``,
    ``target_names``, ``DESCR``; or ``(X, Y)``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ovn_cvx.datasets import load_mulan_arff
    >>> text = '''@relation toy
    ... @attribute x1 numeric
    ... @attribute x2 numeric
    ... @attribute red {0,1}
    ... @attribute blue {0,1}
    ... @data
    ... 0.5,1.5,1,0
    ... {0 2.0,3 1}
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "toy.arff"
    ...     _ = path.write_text(text)
    ...     X, Y = load_mulan_arff(path, n_labels=2, return_X_y=True)
    >>> X
    array([[0.5, 1.5],
           [2. , 0. ]])
    >>> Y
    array([[1, 0],
           [0, 1]])
    """
    with naming("path"):
        path = Path(path)
    if sha256 is not None and not isinstance(sha256, str):
        raise TypeError(f"sha256 must be a hex string or None, got {type(sha256).__name__}")
    X, Y, features, labels = _parse_mulan(_text(_read_verified(path, sha256), str(path)), n_labels, str(path))
    return _result(X, Y, features, labels, f"Mulan-format multilabel data from {path.name}.", return_X_y)


def _load_mulan_pair(stem: str, subset: str, n_labels: int, compressed: bool, descr: str, return_X_y, data_dir):
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {SUBSETS}, got {subset!r}")
    parts = ["train", "test"] if subset == "all" else [subset]
    loaded = []
    for part in parts:
        name = f"{stem}-{part}.arff" + (".gz" if compressed else "")
        loaded.append(_parse_mulan(_text(_bundled(name, data_dir), name), n_labels, name))
    X = np.vstack([x for x, *_ in loaded])
    Y = np.vstack([y for _, y, *_ in loaded])
    return _result(X, Y, loaded[0][2], loaded[0][3], descr, return_X_y)


_MULAN_SECTIONS = """
    Parameters
    ----------
    subset : {{"all", "train", "test"}}, default="all"
        Mulan's standard split, or both parts ({train} + {test} rows, train first).
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.
    data_dir : str, path or None, default=None
        Read the files from this directory instead of the bundled copies.

    Returns
    -------
    Bunch or tuple of ndarray
        ``data`` (n, {n_features}) float64, ``target`` (n, 6) int 0/1, ``feature_names``, ``target_names``,
        ``DESCR``; or ``(X, Y)``.

    Raises
    ------
    ChecksumError
        When a file's sha256 differs from the bundled copy's.
"""


def _mulan_sections(train: int, test: int, n_features: int):
    """Append the numpydoc sections the two Mulan loaders share (their parameters are the same)."""
    def decorate(func):
        func.__doc__ = func.__doc__.rstrip() + "\n" + _MULAN_SECTIONS.format(train=train, test=test,
                                                                             n_features=n_features) + "    "
        return func
    return decorate


@_mulan_sections(391, 202, 72)
def load_emotions(subset: str = "all", *, return_X_y: bool = False, data_dir=None):
    """The Mulan *emotions* multilabel data set: 593 music clips, 72 rhythmic/timbre features, 6 labels.

    ``subset`` is Mulan's standard split, "train" (391 rows) or "test" (202 rows), or "all" (593 rows: train
    followed by test; the same rows as Mulan's ``emotions.arff``). Features are on very different scales:
    standardize before fitting an SVM. Label names keep Mulan's spelling ("amazed-suprised",
    "angry-aggresive").

    Returns a Bunch (``data`` (n, 72) float64, ``target`` (n, 6) int 0/1, ``feature_names``,
    ``target_names``, ``DESCR``) or ``(X, Y)`` with ``return_X_y=True``. The bundled files are verified
    against their sha256 (:class:`ChecksumError`); ``data_dir`` reads them from another directory.

    Sources: K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas, "Multi-label classification of music into
    emotions", ISMIR 2008, pp. 325-330; files of the MULAN library (Tsoumakas et al., JMLR 12:2411-2414,
    2011; github.com/tsoumakas/mulan).

    Examples
    --------
    >>> from ovn_cvx.datasets import load_emotions
    >>> X, Y = load_emotions("train", return_X_y=True)
    >>> X.shape, Y.shape, int(Y.sum(axis=1).max())     # Y: a 0/1 label indicator matrix
    ((391, 72), (391, 6), 3)
    >>> load_emotions().target_names[:2]
    ['amazed-suprised', 'happy-pleased']
    """
    descr = f"Mulan emotions ({subset}).\n{EMOTIONS_CITATION}\n{MULAN_CITATION}"
    return _load_mulan_pair("emotions", subset, 6, False, descr, return_X_y, data_dir)


@_mulan_sections(1211, 1196, 294)
def load_scene(subset: str = "all", *, return_X_y: bool = False, data_dir=None):
    """The Mulan *scene* multilabel data set: 2407 images, 294 colour-moment features in [0, 1], 6 labels
    (Beach, Sunset, FallFoliage, Field, Mountain, Urban).

    ``subset`` is Mulan's standard split, "train" (1211 rows) or "test" (1196 rows), or "all" (2407 rows,
    train followed by test). The files are bundled gzip-compressed.

    Returns a Bunch (``data`` (n, 294) float64, ``target`` (n, 6) int 0/1, ...) or ``(X, Y)``; checksums
    verified as for :func:`load_emotions`.

    Sources: M. R. Boutell, J. Luo, X. Shen, C. M. Brown, "Learning multi-label scene classification",
    Pattern Recognition 37(9):1757-1771, 2004; files of the MULAN library (github.com/tsoumakas/mulan).

    Examples
    --------
    >>> from ovn_cvx.datasets import load_scene
    >>> scene = load_scene("test")
    >>> scene.data.shape, scene.target.shape, scene.target_names[0]
    ((1196, 294), (1196, 6), 'Beach')
    """
    descr = f"Mulan scene ({subset}).\n{SCENE_CITATION}\n{MULAN_CITATION}"
    return _load_mulan_pair("scene", subset, 6, True, descr, return_X_y, data_dir)


GLASS_FEATURES = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe"]
GLASS_CLASSES = {1: "building_windows_float_processed", 2: "building_windows_non_float_processed",
                 3: "vehicle_windows_float_processed", 4: "vehicle_windows_non_float_processed",
                 5: "containers", 6: "tableware", 7: "headlamps"}


def load_glass(*, return_X_y: bool = False, keep_id: bool = False, data_dir=None):
    """UCI *Glass Identification*: 214 glass samples, 9 features (refractive index and 8 oxide contents),
    6 classes present, labelled 1, 2, 3, 5, 6, 7 (type 4 has no sample).

    The Id column of ``glass.data`` is dropped: it is the row number, and the rows are sorted by class,
    so it would give the class away. Shuffle or stratify before splitting. ``keep_id=True`` keeps it as the
    first feature (named ``Id``): only to measure what such a leak does (the reproduction's glass evidence).

    Returns a Bunch (``data`` (214, 9) float64, ``target`` (214,) int64 with values in {1, 2, 3, 5, 6, 7},
    ``feature_names``, ``target_names`` (the 6 present types, in the order of ``np.unique(target)``),
    ``DESCR`` (the UCI ``glass.names`` text)) or ``(X, y)``. Checksums verified as for :func:`load_emotions`.

    Source: UCI Machine Learning Repository (Dua & Graff, 2019), data set by B. German (Home Office Forensic
    Science Service), donated by V. Spiehler (1987).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.
    keep_id : bool, default=False
        Keep the Id column as the first feature (it leaks the class).
    data_dir : str, path or None, default=None
        Read the files from this directory instead of the bundled copies.

    Returns
    -------
    Bunch or tuple of ndarray
        The Bunch described above, or ``(X, y)``.

    Raises
    ------
    ChecksumError
        When a file's sha256 differs from the bundled copy's.

    Examples
    --------
    >>> import numpy as np
    >>> from ovn_cvx.datasets import load_glass
    >>> X, y = load_glass(return_X_y=True)
    >>> X.shape, np.unique(y).size
    ((214, 9), 6)
    """
    table = np.loadtxt(io.BytesIO(_bundled("glass.data", data_dir)), delimiter=",")  # Id, 9 features, Type
    if table.shape[1] != len(GLASS_FEATURES) + 2:
        raise ValueError(f"glass.data must have {len(GLASS_FEATURES) + 2} columns, got {table.shape[1]}")
    if not isinstance(keep_id, bool):
        raise TypeError(f"keep_id must be a bool, got {type(keep_id).__name__}")
    first = 0 if keep_id else 1
    X, y = table[:, first:-1], table[:, -1].astype(np.int64)
    descr = _bundled("glass.names", data_dir).decode("utf-8") + "\n" + GLASS_CITATION
    names = (["Id"] if keep_id else []) + list(GLASS_FEATURES)
    return _result(X, y, names, [GLASS_CLASSES[k] for k in np.unique(y)], descr, return_X_y)


def _sklearn_loader(name: str, shape: str, example: str):
    """``load_<name>``: scikit-learn's bundled copy of a small data set, with this package's loader signature;
    ``example`` is its docstring's Examples section (doctest lines, indented as the docstring)."""
    def load(*, return_X_y: bool = False):
        return getattr(sklearn.datasets, f"load_{name}")(return_X_y=return_X_y)

    load.__name__ = load.__qualname__ = f"load_{name}"
    load.__doc__ = f"""scikit-learn's {name} ({shape}), from the copy bundled with scikit-learn (no network).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple of ndarray
        scikit-learn's Bunch, or ``(X, y)``.

    Examples
    --------
{example}
    """
    return load


load_iris = _sklearn_loader("iris", "150 × 4, 3 classes", """\
    >>> from ovn_cvx.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> X.shape, y.shape
    ((150, 4), (150,))""")
load_wine = _sklearn_loader("wine", "178 × 13, 3 classes", """\
    >>> from ovn_cvx.datasets import load_wine
    >>> wine = load_wine()
    >>> wine.data.shape, wine.target_names.tolist()
    ((178, 13), ['class_0', 'class_1', 'class_2'])""")
