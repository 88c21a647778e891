"""The evaluation browser: every example of a labelled file with its gold answer and the
model's prediction, filters, a confusion matrix (classifiers), scores per entity type
(taggers) and per question (QA), from File > Evaluate… or a finished fine-tuning run.

Imports `widgets` and `services` (its work runs as a `services.EvaluationRequest`).
"""
