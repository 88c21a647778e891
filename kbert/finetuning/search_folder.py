"""The files of a search's folder, by name, for readers that must not load Keras (the app)."""

# Optuna's journal: every trial of the search. A folder holding it holds a search, which
# starting the same search again continues.
JOURNAL_FILE = "search.journal"
# The table of finished trials, rewritten after each: one row per trial, the best marked.
TABLE_CSV = "search_trials.csv"
TABLE_JSON = "search_trials.json"
