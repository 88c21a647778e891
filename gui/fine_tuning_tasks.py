"""What the fine-tuning tab says about each task: its label, its files, its help."""

from kbert_gui.fine_tuning_job import MASKED_LM

# task name: (label, file-dialog filter)
TASKS = {
    "classification": (
        "Text classification",
        "Tables (*.csv *.tsv *.jsonl *.json *.ndjson);;All files (*)",
    ),
    "pair-classification": (
        "Text-pair classification",
        "Tables (*.csv *.tsv *.jsonl *.json *.ndjson);;All files (*)",
    ),
    "token-classification": (
        "Token classification (CoNLL)",
        "CoNLL files (*.conll *.txt *.iob *.bio *.tsv);;All files (*)",
    ),
    "qa": ("Question answering (SQuAD)", "SQuAD files (*.json);;All files (*)"),
    MASKED_LM: ("Continued masked-LM pretraining", "Text files (*.txt);;All files (*)"),
}
TASK_TOOLTIP = (
    "<b>Text classification</b>: one label per text (CSV, TSV or JSON Lines).<br>"
    "<b>Text-pair classification</b>: one label per pair of texts (e.g. entailment).<br>"
    "<b>Token classification</b>: a tag per word, CoNLL format (named entities).<br>"
    "<b>Question answering</b>: answer spans in a context, SQuAD v1.1/v2.0 JSON.<br>"
    "<b>Continued masked-LM pretraining</b>: adapt the model to the language of a plain "
    "text file (documents separated by blank lines)."
)
# data kind (`training_data_preview.DATA_KINDS`): the line under the file fields
DATA_HELP = {
    "table": "Map the file's columns below; rows the reader rejects are marked red.",
    "conll": "CoNLL: one word per line, its tag in the last column, a blank line between sentences.",
    "squad": "SQuAD JSON: data → paragraphs → context and qas (question, answers).",
    "text": "Plain text: one sentence or paragraph per line, documents separated by blank lines.",
}
