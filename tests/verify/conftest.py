import pytest

from ovn_cvx.verify.suite import BinaryCase, SuiteCase


@pytest.fixture(scope="session")
def tiny():
    """(suite, binary cases): the eight formulations on two tiny data sets, one tiny binary problem."""
    suite = (SuiteCase("tiny-mc", "multiclass", 24, 3, 3, seed=1),
             SuiteCase("tiny-ml-rbf", "multilabel", 30, 3, 3, kernel="rbf", seed=2))
    return suite, (BinaryCase("tiny-bin", 30, 3, seed=3),)


@pytest.fixture
def tiny_suite(monkeypatch, tiny):
    """Make the CLI run the tiny suite (and the tiny binary case) instead of the default one."""
    from ovn_cvx.verify import suite
    monkeypatch.setattr(suite, "DEFAULT_SUITE", tiny[0])
    monkeypatch.setattr(suite, "DEFAULT_BINARY", tiny[1])
    return tiny
