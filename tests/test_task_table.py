"""The task table and the model table agree, and a fine-tuning probe calls the inference
verb of its model's row with the probe's fields (no Keras: stand-in model classes)."""

import pytest

from kbert.finetuning.task_specs import TASK_SPECS
from kbert.model_table import BUILT_IN_CLASSES
from kbert.model_table import MODEL_CLASSES


def _recording_class(name, verb):
    """A class called `name` whose method `verb` returns how it was called."""

    def method(self, *args, **kwargs):
        return (verb, args, kwargs)

    return type(name, (), {verb: method})


# Each task's probe, and the call the model gets.
PROBES = {
    "classification": ({"text": "a film"}, ("classify", ("a film",), {})),
    "pair-classification": (
        {"text": "a film", "pair": "a play"},
        ("classify", ("a film", "a play"), {}),
    ),
    "token-classification": ({"text": "Ada Lovelace"}, ("tag", ("Ada Lovelace",), {})),
    "qa": (
        {"question": "who?", "context": "Ada."},
        ("answer", ("who?", "Ada."), {"top_k": 3}),
    ),
    "multiple-choice": (
        {"context": "She sat", "endings": ("down.", "up.")},
        ("choose", ("She sat", ["down.", "up."]), {}),
    ),
    # Continued pretraining's probe runs on the masked-LM model its run saves.
    "masked-lm": ({"text": "a [MASK] film"}, ("fill_mask", ("a [MASK] film",), {"top_k": 5})),
}
# The class a probe's model is, for tasks whose saved model is not its training head.
PROBED_CLASS = {"masked-lm": "BertMaskedLM"}


def test_every_built_in_task_has_a_probe_case():
    assert set(PROBES) == set(TASK_SPECS)


@pytest.mark.parametrize("task", sorted(PROBES))
def test_a_probe_calls_the_inference_verb_of_the_models_row(task):
    probe, expected = PROBES[task]
    row = MODEL_CLASSES[PROBED_CLASS.get(task, TASK_SPECS[task].head)]
    model = _recording_class(row.name, row.inference_verb)()
    assert TASK_SPECS[task].predict(model, probe) == expected


def test_a_subclass_answers_with_its_base_classes_verb():
    base = _recording_class("BertClassifier", "classify")
    subclass = type("MyClassifier", (base,), {})
    assert TASK_SPECS["classification"].predict(subclass(), {"text": "x"})[0] == "classify"


def test_a_model_without_a_verb_is_refused_by_name():
    with pytest.raises(ValueError, match="Received: BertPretrainer"):
        TASK_SPECS["masked-lm"].predict(type("BertPretrainer", (), {})(), {"text": "x"})


def test_every_task_head_and_registered_name_is_in_the_model_table():
    assert {spec.head for spec in TASK_SPECS.values()} <= set(MODEL_CLASSES)
    assert all(row.registered_name == f"kbert>{row.name}" for row in BUILT_IN_CLASSES)
