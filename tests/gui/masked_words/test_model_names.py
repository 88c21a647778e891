"""One model, one name: the masked-words views and the evaluation window name a model as
the window's header does ("runs/swag" for a run's saved model, not "swag/model")."""

import pytest
from gui_helpers import make_context
from gui_helpers import stop_context

from kbert_gui.masked_words.masked_words_format import display_name
from kbert_gui.masked_words.model_comparison_pane import ModelComparisonPane
from kbert_gui.services.evaluation_request import EvaluationRequest
from kbert_gui.services.model_description import short_name

SOURCES = [
    "demo",
    "/home/me/runs/swag/model",
    "/home/me/presets/tiny",
    "hf://google-bert/bert-base-uncased",
]


@pytest.mark.parametrize("source", SOURCES)
def test_the_predictions_title_is_the_headers_name(source):
    assert display_name(source) == short_name(source)


def test_a_runs_model_is_named_after_its_run_in_the_comparison_pane(qtbot, tmp_path):
    context = make_context(tmp_path)
    pane = ModelComparisonPane(context)
    qtbot.addWidget(pane)
    try:
        pane.set_comparison_source("/home/me/runs/swag/model")
        assert pane.view.title_label.text() == "runs/swag"
        assert pane.view.title_label.toolTip() == "/home/me/runs/swag/model"
    finally:
        stop_context(context)


def test_the_evaluation_window_names_the_model_as_the_header_does():
    request = EvaluationRequest("/home/me/runs/swag/model", "multiple-choice", "/data/dev.csv")
    assert request.title == "dev.csv — runs/swag"
