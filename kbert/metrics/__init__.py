"""Evaluation metrics for BERT tasks; numpy only, importable without Keras.

- classification: `accuracy`, `macro_f1`, `matthews_corrcoef` (as scikit-learn).
- token classification: `entity_scores`, `entity_scores_by_type`, `extract_entities`
  (entity level, as seqeval's default mode).
- question answering: `squad_scores`, `squad_question_scores` (per question),
  `normalize_answer` (the official SQuAD evaluation).
"""

from kbert.metrics.classification_metrics import accuracy, macro_f1, matthews_corrcoef
from kbert.metrics.entity_metrics import entity_scores, entity_scores_by_type, extract_entities
from kbert.metrics.squad_metrics import normalize_answer, squad_question_scores, squad_scores

__all__ = [
    "accuracy",
    "entity_scores",
    "entity_scores_by_type",
    "extract_entities",
    "macro_f1",
    "matthews_corrcoef",
    "normalize_answer",
    "squad_question_scores",
    "squad_scores",
]
