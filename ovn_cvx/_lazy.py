"""Lazy package attributes: a package's public names are imported on first use, so that importing the package (the
command line's ``--version`` and ``--help``) does not import NumPy's heavier neighbours, scikit-learn or CVXPY."""
from __future__ import annotations

import importlib
import sys
import types


def _exported(submodule: types.ModuleType, name: str):
    """The submodule's ``name``, or the submodule itself when it does not define ``name`` (``ovn_cvx.datasets``)."""
    return getattr(submodule, name, submodule)


class _LazyPackage(types.ModuleType):
    """A package module whose exported names win over its same-named submodules: importing the submodule
    ``ovn_cvx.solve`` binds the package's attribute ``solve`` to that module, while ``ovn_cvx.solve`` is the
    function. The import system binds the submodule after running it, so its function exists by then."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}" \
                and name in self.__dict__.get("_lazy_exports", ()):
            value = _exported(value, name)
        super().__setattr__(name, value)


def attach(package: str, exports: dict) -> None:
    """Make ``exports`` (public name → the submodule of ``package`` that defines it, or the submodule of that
    name itself) attributes of ``package`` that are imported on first access."""
    module = sys.modules[package]
    module._lazy_exports = dict(exports)

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        submodule = importlib.import_module(f"{package}.{exports[name]}")
        setattr(module, name, _exported(submodule, name))
        return module.__dict__[name]

    def __dir__():
        return sorted(set(module.__dict__) | set(exports))

    module.__getattr__, module.__dir__ = __getattr__, __dir__
    module.__class__ = _LazyPackage
