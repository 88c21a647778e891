"""Token classification (named entities, ...) on CoNLL-style data, one tag per word."""

import numpy as np

from kbert.argument_checks import describe_kind
from kbert.data.examples import TokenClassificationExample
from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert.inference.model_io import softmax
from kbert.metrics import entity_scores
from kbert.metrics import entity_scores_by_type
from kbert.metrics import extract_entities
from kbert.preprocessing.token_classifier_preprocessor import OUTSIDE_TAG
from kbert.preprocessing.token_classifier_preprocessor import TokenClassifierPreprocessor
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.fine_tuning_recipe import table_label
from kbert.finetuning.fine_tuning_recipe import predict_features
from kbert.finetuning.task_specs import task_spec

class TokenClassificationRecipe(FineTuningRecipe):
    """Tagging words with BIO / IOB2 / BIOES labels, scored by entity F1.

    The words of a sentence are joined with spaces and tokenized once; character
    offsets tell which sub-words belong to which word. The first sub-word of each
    word carries the word's tag and the others are ignored by the loss (-100), as
    in BERT's NER experiments. Scores are entity-level over the words' tags, as
    seqeval computes them.

    Args:
        token_column: column of the word in the CoNLL file.
        tag_column: column of its tag (-1: the last).
    """

    name = "token-classification"
    metric = task_spec("token-classification").metric

    def __init__(self, token_column=0, tag_column=-1):
        self.token_column = token_column
        self.tag_column = tag_column

    example_class = TokenClassificationExample

    @property
    def model_class(self):
        from kbert.models.bert_token_classifier import BertTokenClassifier

        return BertTokenClassifier

    def table_example(self, values, label, row):
        words = values["words"]
        words = words.split() if isinstance(words, str) else list(words)
        if label is None:
            raise ValueError(
                f"Row {row} has no tags: each row needs one tag per word, under 'tags' (or "
                "'ner_tags')."
            )
        tags = label.split() if isinstance(label, str) else label
        if not isinstance(tags, (list, tuple)) and type(tags).__name__ != "ndarray":
            raise ValueError(
                f"The tags of row {row} must be a list of tag strings. Received: "
                f"{describe_kind(tags)}"
            )
        tags = [table_label(tag, row, integers=False) for tag in tags]
        if len(tags) != len(words):
            raise ValueError(f"Row {row} has {len(words)} words but {len(tags)} tags.")
        return TokenClassificationExample(tokens=words, tags=tags, line=row + 1)

    def read(self, path):
        from kbert.data import read_conll

        return read_conll(path, token_column=self.token_column, tag_column=self.tag_column)

    def example_labels(self, example):
        return example.tags

    def example_label_lines(self, example):
        # Each tag's own line where the reader recorded it, else the sentence's.
        lines = example.token_lines or [example.line] * len(example.tags)
        return list(zip(example.tags, lines))

    def label_names(self, examples, source="the training data"):
        from kbert.data import label_names_from_tags

        if not examples:
            raise ValueError(f"{source} has no sentences.")
        return list(label_names_from_tags([example.tags for example in examples]))

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = TokenClassifierPreprocessor(tokenizer, max_length, label_names)
        return preprocessor.features(
            [list(example.tokens) for example in examples],
            None if label_names is None else [list(example.tags) for example in examples],
            sources=[f"at line {example.line}" for example in examples],
        )

    def predict_tags(self, model, examples, max_length=None, batch_size=None):
        """The predicted tag of every word of every example: a list of lists of strings."""
        return [tags for tags, _ in self._word_predictions(model, examples, max_length, batch_size)]

    def _word_predictions(self, model, examples, max_length, batch_size):
        """`(tags, probabilities)` per example: each word's predicted tag and its probability."""
        tokenizer, max_length = model_limits(model, max_length)
        features = self.features(examples, tokenizer, None, max_length)
        logits = predict_features(
            model, features, tokenizer, max_length, batch_size, sequence_outputs=True
        )
        label_names = model.label_names
        predictions = []
        for positions, row_logits in zip(features.word_positions, logits):
            probabilities = softmax(row_logits)  # (L, C)
            ids = np.argmax(probabilities, axis=-1)
            # A word cut off by truncation has no sub-word: "O", as certain as can be.
            words = [(label_names[ids[p]], float(probabilities[p, ids[p]])) if p >= 0
                     else (OUTSIDE_TAG, 1.0) for p in positions.tolist()]
            predictions.append(([tag for tag, _ in words], [value for _, value in words]))
        return predictions

    def evaluation_predictions(
        self, model, examples, max_length=None, batch_size=None
    ):
        """Each sentence's gold and predicted tags and entities; entity-level precision,
        recall and F1 from them, overall and per entity type."""
        if not model.label_names:
            raise ValueError(
                "Token classification needs a model with `label_names` (the tag strings). "
                f"Received: label_names={model.label_names!r}"
            )
        self.check_labels(examples, model.label_names, "the evaluation data")
        words = self._word_predictions(model, examples, max_length, batch_size)
        rows = []
        for index, (example, (tags, probabilities)) in enumerate(zip(examples, words)):
            gold = _entities(example.tokens, example.tags)
            predicted = _entities(example.tokens, tags)
            rows.append(
                {
                    "index": index,
                    "line": example.line,
                    "text": " ".join(example.tokens),
                    "gold": list(example.tags),
                    "predicted": tags,
                    "probability": min(probabilities, default=1.0),
                    "correct": gold == predicted,
                    "gold_entities": gold,
                    "predicted_entities": predicted,
                    "missed": [entity for entity in gold if entity not in predicted],
                    "spurious": [entity for entity in predicted if entity not in gold],
                }
            )
        gold_tags = [row["gold"] for row in rows]
        predicted_tags = [row["predicted"] for row in rows]
        return EvaluationPredictions(
            self.name,
            TAGGER_COLUMNS,
            tuple(rows),
            entity_scores(gold_tags, predicted_tags),
            entity_types=entity_scores_by_type(gold_tags, predicted_tags),
        )

    def options(self):
        return {
            "task": self.name,
            "token_column": self.token_column,
            "tag_column": self.tag_column,
        }


TAGGER_COLUMNS = (
    "index", "line", "text", "gold", "predicted", "probability", "correct",
    "gold_entities", "predicted_entities", "missed", "spurious",
)


def _entities(words, tags):
    """`[type, start, end, words]` of each entity in `tags` (word positions, end exclusive)."""
    return [
        [entity_type, start, end, " ".join(words[start:end])]
        for entity_type, start, end in extract_entities(list(tags))
    ]
