"""A Hugging Face `datasets` `ClassLabel` label column gives its names: a classifier or
tagger trained on it labels with them ("spam", not "1"), and the tables read for
fine-tuning carry the names, not the ids."""

import types

import pytest

from inference_helpers import save_tiny_preset
from kbert.models import BertClassifier
from kbert.models import BertTokenClassifier
from kbert.preprocessing.class_labels import class_label_names
from kbert.preprocessing.class_labels import named_labels


def feature(**attributes):
    return types.SimpleNamespace(**attributes)


def test_class_label_names_are_read_from_the_features_alone():
    # A stand-in with the attributes `datasets` documents: `dataset.features[column]`
    # is a ClassLabel (`.names`) or a sequence of one (`.feature.names`).
    dataset = feature(
        features={
            "label": feature(names=["ham", "spam"]),
            "ner_tags": feature(feature=feature(names=["O", "B-PER"])),
            "score": feature(dtype="int64"),
        }
    )
    assert class_label_names(dataset, "label") == ["ham", "spam"]
    assert class_label_names(dataset, "ner_tags") == ["O", "B-PER"]
    assert class_label_names(dataset, "score") is None
    assert class_label_names(dataset, "missing") is None
    assert class_label_names(feature(), "label") is None  # records, DataFrames


def test_ids_become_names_and_a_missing_label_stays_for_the_checks():
    assert named_labels([1, 0, -1], ["ham", "spam"]) == ["spam", "ham", -1]
    assert named_labels([[0, 1], [1]], ["O", "B-PER"]) == [["O", "B-PER"], ["B-PER"]]


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return save_tiny_preset(tmp_path_factory.mktemp("class_labels") / "backbone")


def test_a_classifier_fit_on_a_class_label_column_classifies_with_its_names(preset, tmp_path):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["ham", "spam"])}
    )
    data = datasets.Dataset.from_dict(
        {"text": ["the cat sat", "the dog ran", "a cat", "a dog"], "label": [0, 1, 0, 1]},
        features=features,
    )
    model = BertClassifier.from_preset(preset, num_classes=2)
    model.fit(data, epochs=1, verbose=0)
    assert model.label_names == ["ham", "spam"]
    assert model.classify("the cat sat").label in ("ham", "spam")
    model.save_to_preset(tmp_path / "saved")
    assert BertClassifier.from_preset(tmp_path / "saved").label_names == ["ham", "spam"]
    # Evaluated on the same column: the names look up as the ids did.
    assert model.evaluate(data, verbose=0, return_dict=True)["loss"] > 0


def test_a_tagger_fit_on_a_sequence_of_class_labels_tags_with_its_names(preset):
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "tokens": datasets.List(datasets.Value("string")),
            "ner_tags": datasets.List(datasets.ClassLabel(names=["O", "B-ANIMAL"])),
        }
    )
    data = datasets.Dataset.from_dict(
        {"tokens": [["the", "cat"], ["a", "dog", "sat"]], "ner_tags": [[0, 1], [0, 1, 0]]},
        features=features,
    )
    model = BertTokenClassifier.from_preset(preset, num_classes=2)
    model.fit(data, y="ner_tags", epochs=1, verbose=0)
    assert model.label_names == ["O", "B-ANIMAL"]


def test_a_class_label_of_another_size_than_the_head_is_refused(preset):
    datasets = pytest.importorskip("datasets")
    data = datasets.Dataset.from_dict(
        {"text": ["the cat"], "label": [0]},
        features=datasets.Features(
            {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["a", "b", "c"])}
        ),
    )
    model = BertClassifier.from_preset(preset, num_classes=2)
    with pytest.raises(ValueError, match=r"ClassLabel of 3 names \['a', 'b', 'c'\].*num_classes=2"):
        model.fit(data, epochs=1, verbose=0)


def test_fine_tuning_reads_a_class_label_column_as_its_names():
    datasets = pytest.importorskip("datasets")
    from kbert.finetuning.classification_recipe import ClassificationRecipe

    data = datasets.Dataset.from_dict(
        {"text": ["the cat", "the dog", "a cat"], "label": [1, 0, 1]},
        features=datasets.Features(
            {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["ham", "spam"])}
        ),
    )
    recipe = ClassificationRecipe()
    examples = recipe.examples(data)
    assert [example.label for example in examples] == ["spam", "ham", "spam"]
    assert recipe.label_names(examples) == ["ham", "spam"]
