"""The Devices row of the hyperparameter form: hidden on one device, "All local devices
(N)" where there are several, carried into the run's settings and back."""

import pytest
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)

from kbert.finetuning import FineTuningConfig


def _load_environment(tab, qtbot):
    with qtbot.waitSignal(tab.context.environment_ready, timeout=120_000):
        tab.context.load_environment()


def test_one_device_hides_the_row(tab, qtbot, monkeypatch):
    monkeypatch.setattr("kbert.training.distribution.local_device_count", lambda: 1)
    _load_environment(tab, qtbot)
    form = tab.hyperparameters
    assert not form.widget("data_parallel").isVisibleTo(tab)
    assert form.values()["data_parallel"] is False
    form.set_values(data_parallel=True)  # a run of another machine asked for it
    assert form.values()["data_parallel"] is False


@pytest.mark.parametrize("restored_first", [False, True])
def test_several_devices_offer_all_of_them(tab, qtbot, monkeypatch, restored_first):
    monkeypatch.setattr("kbert.training.distribution.local_device_count", lambda: 2)
    form, setup = tab.hyperparameters, tab.setup_controller
    if restored_first:
        # A run's settings restored before Keras has loaded keep their choice.
        setup.restore_settings({"data_parallel": True, "epochs": 2})
    _load_environment(tab, qtbot)
    box = form.widget("data_parallel")
    assert box.isVisibleTo(tab)
    assert [box.itemText(index) for index in range(box.count())] == [
        "This device",
        "All local devices (2)",
    ]
    if not restored_first:
        assert form.values()["data_parallel"] is False
        box.setCurrentIndex(1)
    settings = form.values()
    assert settings["data_parallel"] is True
    assert FineTuningConfig(**settings).data_parallel is True
    form.reset()
    assert form.values()["data_parallel"] is False
    setup.restore_settings(settings)
    assert box.currentText() == "All local devices (2)"
