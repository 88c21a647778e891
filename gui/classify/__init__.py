"""The "Classify & tag" tab: a fine-tuned classifier's label probabilities, a tagger's
entities for the text you type, or a multiple-choice model's pick among the endings of a
context.

`ClassifyTab` is a `ClassifyPanel` (widgets) driven by a `ClassifyController`
(behaviour); the texts are `classify_format`'s. Imports `widgets`, `services` and
`tab_key`, never another tab or the window.
"""
