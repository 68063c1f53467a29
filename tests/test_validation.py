"""The package's shared argument checks (ovn_cvx/_validation.py) against scikit-learn's."""
import numpy as np
import pytest
from sklearn.utils.validation import check_array

from ovn_cvx._validation import float_array

READ_ONLY = np.arange(6.0).reshape(3, 2)
READ_ONLY.setflags(write=False)
INPUTS = [np.arange(6.0).reshape(3, 2), np.asfortranarray(np.arange(6.0).reshape(3, 2)), READ_ONLY, np.arange(3.0),
          np.arange(6).reshape(3, 2), [[1.0, 2.0]], np.array([[1.0, np.nan]]), np.array([np.inf, 1.0]),
          np.array([[-np.inf]]), np.ones((0, 2)), np.ones((2, 0)), np.ones(0), np.ones((2, 2, 2)), np.float64(1.0),
          np.array(1.0), np.array([[1.0, 2.0]], dtype=np.float32), np.array([["a"]], dtype=object)]


@pytest.mark.parametrize("ensure_2d", [True, False])
@pytest.mark.parametrize("value", INPUTS, ids=range(len(INPUTS)))
def test_float_array_is_check_array(value, ensure_2d):
    """The same array (the same object where scikit-learn returns it) or the same error with the same message, for
    arrays that pass as they are, arrays scikit-learn converts, and every failure: NaN, ±inf, no rows or columns,
    3-D, 0-D, objects."""
    try:
        expected = check_array(value, dtype=np.float64, input_name="X", ensure_2d=ensure_2d)
    except (ValueError, TypeError) as err:
        with pytest.raises(type(err)) as raised:
            float_array(value, "X", ensure_2d=ensure_2d)
        assert str(raised.value) == str(err)
        return
    ours = float_array(value, "X", ensure_2d=ensure_2d)
    assert ours.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(ours, expected)
    assert (ours is value) == (expected is value)
