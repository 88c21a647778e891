"""The "Classify & tag" tab: use a fine-tuned classifier, tagger or multiple-choice model
on new text."""

from kbert_gui.classify.classify_controller import ClassifyController
from kbert_gui.classify.classify_format import export_document
from kbert_gui.classify.classify_format import export_rows
from kbert_gui.classify.classify_panel import ClassifyPanel
from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.export_files import write_json


class ClassifyTab(ClassifyPanel):
    """Runs whichever head the current model was fine-tuned with on the text you type.

    A classifier (`BertClassifier`, also for text pairs: the second text goes in the
    field below) shows every label's probability as a bar, the predicted one first;
    a tagger (`BertTokenClassifier`) highlights its entities in the text, in one
    colour per entity type at exactly the characters `tag` returned (emoji included),
    and lists them with their scores; a multiple-choice model (`BertMultipleChoice`)
    takes the text as a context and the endings typed below it (add and remove them),
    and shows one probability bar per ending, the chosen one marked. Predictions
    follow the inputs as they change, through `BertClassifier.classify` /
    `BertTokenClassifier.tag` / `BertMultipleChoice.choose` in the app's inference
    pool. A model with none of these heads (a pretrained or QA model) gets a warning
    pointing to the fine-tuning tab. Below the results, "Why?" scores every word-piece
    of the text for a label or an entity (`SaliencyController`). File ▸ Export saves
    the shown result, and the shown saliency, as CSV or JSON.

    The widgets are the `ClassifyPanel`'s; `controller` (a `ClassifyController`) holds
    the state and does the work.

    Args:
        context: the app's `AppContext`.
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.context = context
        self.controller = ClassifyController(self, context)

    @property
    def outcome(self):
        """The shown `ClassifyOutcome` (with a classification, entities or a choice), or
        None."""
        return self.controller.outcome

    def set_text(self, text, pair=""):
        """Replaces the text (and the pair's second text); a prediction follows."""
        self.pair_edit.setPlainText(pair)
        self.text_edit.setPlainText(text)

    def set_choice(self, context, endings):
        """Replaces the context and its endings (multiple choice); a prediction follows."""
        self.endings_editor.set_endings(endings)
        self.text_edit.setPlainText(context)

    def export_actions(self):
        """The shown result as CSV (the table's rows) or JSON (the whole result)."""
        available = lambda: self.outcome is not None  # noqa: E731
        return [
            ExportAction(
                "Predictions as CSV…", "CSV files (*.csv)", ".csv", self._write_csv, available
            ),
            ExportAction(
                "Predictions as JSON…",
                "JSON files (*.json)",
                ".json",
                self._write_json,
                available,
            ),
            *self._saliency_exports(),
        ]

    def _saliency_exports(self):
        """The shown token saliency as CSV (one row per word-piece) or JSON."""
        saliency = self.controller.saliency
        available = lambda: saliency.saliency is not None  # noqa: E731
        return [
            ExportAction(
                "Saliency as CSV…", "CSV files (*.csv)", ".csv", saliency.write_csv, available
            ),
            ExportAction(
                "Saliency as JSON…", "JSON files (*.json)", ".json", saliency.write_json,
                available,
            ),
        ]

    def _write_csv(self, path):
        columns, rows = export_rows(self.outcome, self.labels_model.rows())
        write_csv(path, columns, rows)

    def _write_json(self, path):
        write_json(path, export_document(self.outcome))
