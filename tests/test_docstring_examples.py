"""The Examples section of every class and function in the API reference: present, and run as a doctest.

The public names are those the reference lists (docs/api/index.rst names the modules; autosummary documents a
module's ``__all__``, or without one the classes and functions the module defines), so that a new public name
without an example fails here.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

API_INDEX = Path(__file__).resolve().parents[1] / "docs" / "api" / "index.rst"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def api_modules(index=API_INDEX):
    """The modules of the reference's autosummary list, in its order."""
    return [line.strip() for line in index.read_text().splitlines() if re.fullmatch(r"\s+ovn_cvx[\w.]*", line)]


def public_objects(module_name):
    """(qualified name, object) of each class and function autosummary documents for ``module_name``."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name, obj in vars(module).items()
                 if not name.startswith("_") and getattr(obj, "__module__", None) == module_name]
    objects = [(f"{module_name}.{name}", getattr(module, name)) for name in names]
    return [(name, obj) for name, obj in objects if inspect.isclass(obj) or inspect.isfunction(obj)]


PUBLIC = dict(item for module in api_modules() for item in public_objects(module))


def examples_section(obj):
    """The text of ``obj``'s numpydoc Examples section ('' without one)."""
    match = re.search(r"^Examples\n-{8}\n(.*?)(?=^\w[\w ]*\n-{3,}\n|\Z)", inspect.getdoc(obj) or "", re.M | re.S)
    return match.group(1) if match else ""


def test_the_reference_lists_the_public_api():
    # a guard on the collection itself: a broken parse of the index would make every test below vacuous
    assert {"ovn_cvx", "ovn_cvx.verify", "ovn_cvx.datasets", "ovn_cvx.experiments"} <= set(api_modules())
    assert {"ovn_cvx.solve", "ovn_cvx.OvNClassifier", "ovn_cvx.duality.gap_bound", "ovn_cvx.testing."
            "assert_matches_reference", "ovn_cvx.exceptions.OvNError"} <= set(PUBLIC)
    assert "ovn_cvx.VARIANTS" not in PUBLIC and "ovn_cvx.datasets" not in PUBLIC  # a constant, a module


def test_examples_section_is_recognised():
    def with_example():
        """Do it.

        Examples
        --------
        >>> 1 + 1
        2

        Notes
        -----
        After.
        """

    def without():
        """Do it.

        Notes
        -----
        The word Examples in prose, and a doctest outside an Examples section:

        >>> 1 + 1
        2
        """

    assert examples_section(with_example).strip() == ">>> 1 + 1\n2"
    assert examples_section(without) == ""


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_docstring_example(name):
    obj = PUBLIC[name]
    section = examples_section(obj)
    assert ">>>" in section, f"{name}'s docstring has no Examples section with a doctest"
    # the object's own docstring only (its methods' examples are not part of the rule)
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    summary = runner.summarize(verbose=False)
    assert summary.attempted > 0
    assert summary.failed == 0, f"{name}: {summary.failed} of {summary.attempted} example lines failed (output above)"
