import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

TINY = dict(
    vocabulary_size=97,
    hidden_size=32,
    num_layers=2,
    num_heads=4,
    intermediate_size=37,
    max_positions=24,
    type_vocabulary_size=2,
    hidden_dropout=0.0,
    attention_dropout=0.0,
)


@pytest.fixture(autouse=True)
def _reset_keras_state():
    # Cheap on purpose: keras.backend.clear_session() costs up to a second per test under
    # PyTorch, and kbert names its layers explicitly, so no test depends on fresh names.
    keras.utils.set_random_seed(1234)
    yield
    if keras.mixed_precision.global_policy().name != "float32":
        keras.mixed_precision.set_global_policy("float32")


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_ui_thread(request):
    # As the app does (kbert_gui.services.main_thread_garbage_collector): a collection in
    # a worker thread that frees Qt objects crashes PySide, so Qt tests collect on the UI
    # thread.
    if "qapp" not in request.fixturenames:
        yield
        return
    from kbert_gui.services.main_thread_garbage_collector import MainThreadGarbageCollector

    collector = MainThreadGarbageCollector()
    collector.start()
    yield
    collector.stop()


def make_inputs(batch_size=3, sequence_length=10, vocabulary_size=97, seed=0, num_masks=0):
    """Random inputs with different real lengths per row (row 0 is full length)."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, vocabulary_size, size=(batch_size, sequence_length)).astype("int32")
    lengths = np.linspace(sequence_length, max(3, sequence_length // 2), batch_size).astype(int)
    padding_mask = (np.arange(sequence_length)[None, :] < lengths[:, None]).astype("int32")
    token_ids = np.where(padding_mask == 1, token_ids, 0).astype("int32")
    segment_ids = np.zeros_like(token_ids)
    for row, length in enumerate(lengths):
        segment_ids[row, length // 2 : length] = 1
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    if num_masks:
        inputs["mask_positions"] = np.stack(
            [rng.choice(int(length), size=num_masks, replace=False) for length in lengths]
        ).astype("int32")
    return inputs


@pytest.fixture
def tiny_config():
    return dict(TINY)
