"""The "Question answering" tab: ask about a passage, see the answer highlighted in it,
the n-best answers, "no answer" with a threshold, start/end probability shading.

`QuestionAnsweringTab` is a `QuestionAnsweringPanel` (widgets) driven by a
`QuestionAnsweringController` (behaviour); the texts are `question_answering_format`'s.
Imports `widgets`, `services` and `tab_key`, never another tab or the window.
"""
