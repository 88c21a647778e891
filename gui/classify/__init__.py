"""The "Classify & tag" tab: a fine-tuned classifier's label probabilities, a tagger's
entities for the text you type, a multiple-choice model's pick among the endings of a
context, or the result of a head a package added to kbert's tables.

What the tab runs for a model (`ClassifyHead`) is read from the model table and the task
table: the row's verb, kind and tab, and its tasks' inputs; no model class is named here.

`ClassifyTab` is a `ClassifyPanel` (widgets) driven by a `ClassifyController`
(behaviour); the texts are `classify_format`'s. Imports `widgets`, `services` and
`tab_key`, never another tab or the window.
"""
