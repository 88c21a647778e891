"""The "Masked words" tab: what a model predicts behind each [MASK] as you type, named
words scored whole, a second model side by side, and the attention views.

`MaskedWordsTab` is a `MaskedWordsPanel` (widgets) driven by a
`MaskedWordsController` (behaviour); the texts are `masked_words_format`'s. Imports
`widgets`, `services` and `tab_key`, never another tab or the window.
"""
