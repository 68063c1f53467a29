"""ovn_cvx.datasets: shapes and counts against the published numbers (/work/shared/datasets/README.md and
glass.names), checksums, the generic Mulan loader on hand-written files, and the generators."""
import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import sklearn.datasets

from ovn_cvx import datasets
from ovn_cvx.datasets import CHECKSUMS, ChecksumError

SHARED = Path("/work/shared/datasets")


@pytest.mark.parametrize("loader, subset, n, m, label_counts", [
    (datasets.load_emotions, "train", 391, 72, None),
    (datasets.load_emotions, "test", 202, 72, None),
    (datasets.load_emotions, "all", 593, 72, [173, 166, 264, 148, 168, 189]),
    (datasets.load_scene, "train", 1211, 294, None),
    (datasets.load_scene, "test", 1196, 294, None),
    (datasets.load_scene, "all", 2407, 294, [427, 364, 397, 433, 533, 431]),
])
def test_mulan_loaders_shapes_and_counts(loader, subset, n, m, label_counts):
    bunch = loader(subset)
    assert bunch.data.shape == (n, m) and bunch.data.dtype == np.float64
    assert bunch.target.shape == (n, 6) and set(np.unique(bunch.target)) <= {0, 1}
    assert len(bunch.feature_names) == m and len(bunch.target_names) == 6
    if label_counts is not None:
        np.testing.assert_array_equal(bunch.target.sum(axis=0), label_counts)
    X, Y = loader(subset, return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(Y, bunch.target)


def test_label_names_and_cardinality():
    emotions, scene = datasets.load_emotions(), datasets.load_scene()
    assert emotions.target_names == ["amazed-suprised", "happy-pleased", "relaxing-calm", "quiet-still",
                                     "sad-lonely", "angry-aggresive"]
    assert scene.target_names == ["Beach", "Sunset", "FallFoliage", "Field", "Mountain", "Urban"]
    assert emotions.target.sum(axis=1).mean() == pytest.approx(1.8685, abs=1e-4)
    assert scene.target.sum(axis=1).mean() == pytest.approx(1.0740, abs=1e-4)
    assert 0 <= scene.data.min() and scene.data.max() <= 1
    assert "Trohidis" in emotions.DESCR and "Boutell" in scene.DESCR


@pytest.mark.skipif(not (SHARED / "emotions.arff").exists(), reason="shared copy of emotions.arff not present")
def test_emotions_all_equals_the_full_mulan_file():
    """Mulan's emotions.arff (not bundled) has the same rows as train + test (as multisets)."""
    full = datasets.load_mulan_arff(SHARED / "emotions.arff", 6,
                                    sha256="6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b")
    ours = datasets.load_emotions("all")
    rows = lambda b: sorted(map(tuple, np.hstack([b.data, b.target])))  # noqa: E731
    assert rows(full) == rows(ours)


def test_glass():
    bunch = datasets.load_glass()
    assert bunch.data.shape == (214, 9) and bunch.target.shape == (214,)
    classes, counts = np.unique(bunch.target, return_counts=True)
    np.testing.assert_array_equal(classes, [1, 2, 3, 5, 6, 7])
    np.testing.assert_array_equal(counts, [70, 76, 17, 13, 9, 29])  # glass.names
    assert bunch.feature_names[0] == "RI"
    assert 1.5 < bunch.data[:, 0].min() and bunch.data[:, 0].max() < 1.54  # the refractive index, not the Id
    assert len(bunch.target_names) == 6 and "Glass Identification" in bunch.DESCR


def test_iris_and_wine_are_sklearns():
    for ours, theirs in [(datasets.load_iris, sklearn.datasets.load_iris), (datasets.load_wine,
                                                                            sklearn.datasets.load_wine)]:
        X, y = ours(return_X_y=True)
        X0, y0 = theirs(return_X_y=True)
        np.testing.assert_array_equal(X, X0)
        np.testing.assert_array_equal(y, y0)
    assert datasets.load_iris().data.shape == (150, 4) and datasets.load_wine().data.shape == (178, 13)


def test_bundled_checksums_are_the_published_ones():
    """sha256 of the bundled files as stored, and of scene's decompressed content, as published."""
    for name, digest in CHECKSUMS.items():
        assert hashlib.sha256((datasets.DATA_DIR / name).read_bytes()).hexdigest() == digest
    content = {"scene-train.arff.gz": "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d",
               "scene-test.arff.gz": "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42"}
    for name, digest in content.items():
        assert hashlib.sha256(gzip.decompress((datasets.DATA_DIR / name).read_bytes())).hexdigest() == digest


@pytest.mark.parametrize("loader, name", [
    (lambda d: datasets.load_emotions("test", data_dir=d), "emotions-test.arff"),
    (lambda d: datasets.load_scene("test", data_dir=d), "scene-test.arff.gz"),
    (lambda d: datasets.load_glass(data_dir=d), "glass.data"),
    (lambda d: datasets.load_glass(data_dir=d), "glass.names"),
])
def test_corrupted_copy_raises(tmp_path, loader, name):
    for file in CHECKSUMS:
        shutil.copy(datasets.DATA_DIR / file, tmp_path / file)
    intact = loader(tmp_path)
    assert intact.data.shape[0] > 0
    data = bytearray((tmp_path / name).read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit
    (tmp_path / name).write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=name):
        loader(tmp_path)


ARFF = """% a tiny Mulan-format file
@relation tiny
@attribute x1 numeric
@attribute flag {0,1}
@attribute x2 numeric
@attribute lab1 {0,1}
@attribute lab2 {0,1}
@data
1.5,1,-2,1,0
0,0,3.25,1,1
-1,1,0,0,0
"""


def test_load_mulan_arff_on_a_hand_written_file(tmp_path):
    path = tmp_path / "tiny.arff"
    path.write_text(ARFF)
    bunch = datasets.load_mulan_arff(path, 2)
    np.testing.assert_array_equal(bunch.data, [[1.5, 1, -2], [0, 0, 3.25], [-1, 1, 0]])
    np.testing.assert_array_equal(bunch.target, [[1, 0], [1, 1], [0, 0]])
    assert bunch.feature_names == ["x1", "flag", "x2"] and bunch.target_names == ["lab1", "lab2"]
    gz = tmp_path / "tiny.arff.gz"
    gz.write_bytes(gzip.compress(ARFF.encode()))
    X, Y = datasets.load_mulan_arff(gz, 2, sha256=hashlib.sha256(gz.read_bytes()).hexdigest(), return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(Y, bunch.target)
    with pytest.raises(ChecksumError):
        datasets.load_mulan_arff(gz, 2, sha256="0" * 64)
    with pytest.raises(ValueError, match="must be nominal"):
        datasets.load_mulan_arff(path, 3)  # x2 is numeric: not a label
    with pytest.raises(ValueError, match="n_labels"):
        datasets.load_mulan_arff(path, 5)


def test_load_mulan_arff_rejects_text_features(tmp_path):
    path = tmp_path / "text.arff"
    path.write_text("@relation t\n@attribute colour {red,blue}\n@attribute lab {0,1}\n"
                    "@attribute lab2 {0,1}\n@data\nred,1,0\nblue,0,1\n")
    with pytest.raises(ValueError, match="colour"):
        datasets.load_mulan_arff(path, 2)


def test_subset_is_validated():
    with pytest.raises(ValueError, match="subset"):
        datasets.load_emotions("validation")


SPARSE_ARFF = ARFF.split("@data")[0] + """@data
{0 1.5, 1 1, 2 -2, 3 1}
% a comment between rows
{1 0, 2 3.25, 3 1, 4 1}
{0 -1, 1 1}
"""


def test_load_mulan_arff_reads_sparse_rows(tmp_path):
    """Omitted attributes of a sparse row are 0 (numeric) or the first declared value (nominal {0,1}: 0)."""
    dense, sparse = tmp_path / "dense.arff", tmp_path / "sparse.arff"
    dense.write_text(ARFF)
    sparse.write_text(SPARSE_ARFF)
    X, Y = datasets.load_mulan_arff(sparse, 2, return_X_y=True)
    expected = datasets.load_mulan_arff(dense, 2)
    np.testing.assert_array_equal(X, expected.data)
    np.testing.assert_array_equal(Y, expected.target)


HEADER = ARFF.split("@data")[0] + "@data\n"


@pytest.mark.parametrize("text, line, match", [
    ("", None, "it is empty"),
    (HEADER[:60], None, "no @data line"),
    (HEADER, None, "no data rows"),
    (HEADER + "1,0,2,1\n", 9, "4 values, the header declares 5"),
    (HEADER + "1,0,2,1,0,7\n", 9, "6 values, the header declares 5"),
    (HEADER + "1,0,2,?,0\n", 9, "label 'lab1' must be 0 or 1"),
    (HEADER + "1,0,2,1,0\n1,0,abc,1,0\n", 10, "'x2' must be numeric, got 'abc'"),
    (HEADER + "1,2,2,1,0\n", 9, r"'flag' must be one of \('0', '1'\), got '2'"),
    (HEADER + "1,0,2'',1,0\n", 9, "stray quote"),
    (HEADER + "{0 1, 9 1}\n", 9, "index 9 is beyond the 5 attributes"),
    (HEADER + "{0 1, 0 2}\n", 9, "given twice"),
    (HEADER + "{0 1, 3 1\n", 9, "must end with '}'"),
    (HEADER + "{0}\n", 9, "'<index> <value>'"),
    ("@relation t\n@attribute s string\n@attribute lab {0,1}\n@data\nx,1\n", 2, "String attributes"),
])
def test_load_mulan_arff_names_file_and_line_of_bad_input(tmp_path, text, line, match):
    path = tmp_path / "bad.arff"
    path.write_text(text)
    where = f"bad.arff, line {line}: " if line else "bad.arff"
    with pytest.raises(ValueError, match=f"{where}.*{match}"):
        datasets.load_mulan_arff(path, 2 if "lab2" in text else 1)


def test_load_mulan_arff_missing_feature_is_nan(tmp_path):
    path = tmp_path / "missing.arff"
    path.write_text(HEADER + "1,?,2,1,0\n")
    X, _ = datasets.load_mulan_arff(path, 2, return_X_y=True)
    np.testing.assert_array_equal(X, [[1.0, np.nan, 2.0]])


@pytest.mark.parametrize("damage, match", [
    (lambda gz: gz[:-10], "EOFError"),  # truncated
    (lambda gz: b"not gzip at all", "BadGzipFile"),
    (lambda gz: gz[:20] + bytes([gz[20] ^ 0xFF]) + gz[21:], "Error"),  # corrupt deflate stream or CRC
])
def test_load_mulan_arff_damaged_gzip(tmp_path, damage, match):
    path = tmp_path / "tiny.arff.gz"
    path.write_bytes(damage(gzip.compress(ARFF.encode())))
    with pytest.raises(ValueError, match=f"tiny.arff.gz is not a readable gzip file .*{match}"):
        datasets.load_mulan_arff(path, 2)
