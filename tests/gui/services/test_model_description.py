"""The app's words and tab for each model class come from kbert's model table."""

import subprocess
import sys

from kbert.model_table import APP_TABS
from kbert_gui.services.model_description import ModelDescription
from kbert_gui.services.model_description import tab_of_class
from kbert_gui.tab_key import TabKey

# What the app says of each of kbert's classes, and the tab that opens it.
EXPECTED = {
    "BertBackbone": ("encoder only", TabKey.MASKED_WORDS),
    "BertPretrainer": ("pretrained", TabKey.MASKED_WORDS),
    "BertMaskedLM": ("masked LM", TabKey.MASKED_WORDS),
    "BertClassifier": ("classifier", TabKey.CLASSIFY),
    "BertTokenClassifier": ("tagger", TabKey.CLASSIFY),
    "BertQuestionAnswerer": ("question answering", TabKey.QUESTION_ANSWERING),
    "BertMultipleChoice": ("multiple choice", TabKey.CLASSIFY),
}


def _description(class_name):
    return ModelDescription(source="m", folder=None, class_name=class_name)


def test_every_tab_a_row_may_name_is_a_tab_of_the_app():
    assert set(APP_TABS) <= {key.value for key in TabKey}


def test_each_class_has_its_kind_and_tab():
    for class_name, (kind, tab) in EXPECTED.items():
        description = _description(class_name)
        assert (description.kind, description.tab_key) == (kind, tab), class_name
        assert description.is_fine_tuned == (tab != TabKey.MASKED_WORDS), class_name


def test_a_class_outside_the_table_is_a_base_model_named_by_its_class():
    description = _description("SomeoneElsesModel")
    assert description.kind == "SomeoneElsesModel" and not description.is_fine_tuned
    assert tab_of_class("SomeoneElsesModel") == TabKey.MASKED_WORDS


def test_describing_models_loads_no_keras():
    code = (
        "import sys\n"
        "import kbert_gui.services.model_description as m\n"
        "m.tab_of_class('BertClassifier')\n"
        "print('keras' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]
