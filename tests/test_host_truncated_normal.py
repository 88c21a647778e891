"""HostTruncatedNormal: BERT's initial weights drawn with NumPy, and skipped while loading."""

import threading

import keras
import numpy as np
import pytest

from kbert.layers import HostTruncatedNormal
from kbert.layers.host_truncated_normal import skipped_random_initialization


def test_host_truncated_normal_draws_bert_initial_weights():
    values = HostTruncatedNormal(stddev=0.02, seed=3)((400, 500))
    assert values.dtype == np.float32 and values.shape == (400, 500)
    assert np.abs(values).max() <= 0.04  # Truncated at two standard deviations.
    # A normal truncated at 2 sigma has a standard deviation of 0.88 sigma.
    assert values.std() == pytest.approx(0.88 * 0.02, rel=0.02)
    np.testing.assert_array_equal(values, HostTruncatedNormal(0.02, seed=3)((400, 500)))
    keras.utils.set_random_seed(7)
    first = HostTruncatedNormal(0.02)((3, 4))
    keras.utils.set_random_seed(7)
    np.testing.assert_array_equal(first, HostTruncatedNormal(0.02)((3, 4)))
    with pytest.raises(ValueError, match="stddev=0"):
        HostTruncatedNormal(stddev=0)


def test_random_values_are_skipped_only_inside_the_block():
    initializer = HostTruncatedNormal(0.02)
    seen_by_another_thread = []
    with skipped_random_initialization():
        assert not initializer((8, 8)).any()
        other = threading.Thread(target=lambda: seen_by_another_thread.append(initializer((8, 8))))
        other.start()
        other.join()
    assert np.abs(seen_by_another_thread[0]).max() > 0
    assert np.abs(initializer((8, 8))).max() > 0
