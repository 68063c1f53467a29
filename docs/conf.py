"""Sphinx configuration of the ovn_cvx documentation.

Build (warnings are errors; the gallery runs every script in ``examples/``)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import ovn_cvx  # noqa: E402

project = "ovn_cvx"
author = "the ovn_cvx authors"
copyright = "the ovn_cvx authors, BSD-3-Clause"
version = release = ovn_cvx.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# docs/README.md is the directory's index on a code host; the site has its own (index.md)
exclude_patterns = ["_build", "README.md", "**/.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json"]
templates_path = ["_templates"]

# --- cross-references: every internal reference must resolve (the site's own link check) ---------------------------
nitpicky = True
# Names in signatures and numpydoc "Parameters" types that are prose or third-party types without an inventory
nitpick_ignore_regex = [
    ("py:class", r"(optional|default.*|array-like|array_like|callable|scalar|sparse matrix|of .*|shape .*|"
                 r"\(.*\)|or|None|\{.*\}|.*['\"].*|.*,.*)"),
    ("py:class", r"(np|numpy|pd|sp|scipy|cp|cvxpy|sklearn|joblib|matplotlib|pathlib|os|collections\.abc|"
                 r"typing|numpy\.typing|distributed)\..*"),
    ("py:class", r"(ndarray|DataFrame|Series|Bunch|Path|Callable|Iterable|Iterator|Sequence|Mapping|Any|"
                 r"ArrayLike|NDArray|Figure|Axes|Client|Parallel)"),
    ("py:class", r"ovn_cvx\..*\._.*|_.*"),
    ("py:obj", r"ovn_cvx\..*\._.*"),
]

# --- API reference ----------------------------------------------------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's public names are its __all__
autodoc_typehints = "none"             # types are in the numpydoc sections
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# numpydoc validation of the public docstrings. The check set: every public object has a docstring (GL08), every
# parameter is documented and no documented parameter is unknown (PR01, PR02), each with a type and a description
# (PR04, PR07), and documented parameters are spelled as in the signature (PR03 order is not checked). Every public
# docstring passes: there is no exclusion list. A dataclass documents its fields in its Parameters section (PR01 and
# PR02 check them there), without ``#:`` comments: a field rendered as an attribute entry is validated through the
# docstring of its default value's type (numpydoc issue 456), None's being empty. The Examples section (EX01) is
# checked by tests/test_docstring_examples.py, for the classes and functions only: numpydoc would ask it of every
# method, property and constant as well.
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR04", "PR07"}

# --- Markdown -------------------------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4
# the reproduction reports' table pages are included in their report and start at "##"
suppress_warnings = ["myst.header"]

# --- gallery --------------------------------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}

# --- HTML -----------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ovn_cvx {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False


# --- docstrings -----------------------------------------------------------------------------------------------------
# The docstrings are plain text with reStructuredText roles: they write absolute values and norms as |x|, optima as
# F*, fitted attributes as coef_. In reStructuredText |x| is a substitution, a lone * opens emphasis and word_ is a
# link. Escape those (outside literals, doctest blocks and roles) before numpydoc reads the text.
_PROTECTED = re.compile(r"(``.*?``|:?[\w:.-]*`[^`]*`_{0,2}"            # literals, roles, links
                        r"|\*\*[^*\s][^*]*\*\*|(?<![\w*])\*[^*\s][^*]*?(?<!\s)\*(?![\w*]))")  # **strong**, *emphasis*
_PLAIN = [(re.compile(r"(?<!\\)\|"), r"\\|"), (re.compile(r"(?<=[^\s*\\`])\*(?![*`])"), r"\\*"),
          (re.compile(r"(?<=\w)_(?=[\s,.;:)\]/*\\]|$)"), r"\\_")]


def _escape_plain(text):
    for pattern, repl in _PLAIN:
        text = pattern.sub(repl, text)
    return text


def _escape_plain_text(app, what, name, obj, options, lines):
    in_literal = in_doctest = False  # a doctest block runs from its first ">>>" line to the next blank line
    for i, line in enumerate(lines):
        stripped = line.strip()
        if in_literal and stripped and not line.startswith((" ", "\t")):
            in_literal = False
        in_doctest = bool(stripped) and (in_doctest or stripped.startswith(">>>"))
        if not (in_literal or in_doctest):
            parts = _PROTECTED.split(line)
            parts[::2] = [_escape_plain(part) for part in parts[::2]]
            lines[i] = "".join(parts)
        if stripped.endswith("::"):
            in_literal = True


def _resolve_by_public_name(app, env, node, contnode):
    """A docstring's reference to a module-level path (``ovn_cvx.verify.comparison.compare``) links to the public
    object of that name (``ovn_cvx.verify.compare``) when there is exactly one."""
    if not _from_docstring(node):
        return None
    target = node["reftarget"].lstrip("~.")
    short = target.rsplit(".", 1)[-1]
    domain = env.get_domain("py")
    matches = [name for name, obj in domain.objects.items()
               if name.rsplit(".", 1)[-1] == short and (target.startswith("ovn_cvx") or "." not in target)]
    if len(matches) != 1:
        return None
    resolved = domain.resolve_any_xref(env, node["refdoc"], app.builder, matches[0], node, contnode)
    return resolved[0][1] if resolved else None


def _quiet_for_private_docstring_targets(app, domain, node):
    """References from docstrings to functions outside the public API render as code without a link (the site's own
    pages stay strict: a broken reference there fails the build)."""
    return _from_docstring(node)


def _from_docstring(node):
    source = node.source or ""
    return ("docstring of" in source or "<autosummary>" in source) and node.get("refdomain") == "py"


def setup(app):
    app.connect("autodoc-process-docstring", _escape_plain_text, priority=400)
    app.connect("missing-reference", _resolve_by_public_name)
    app.connect("warn-missing-reference", _quiet_for_private_docstring_targets)
