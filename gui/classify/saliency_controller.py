"""The "Why?" box's behaviour: targets from the shown result, saliency in a worker."""

import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import Slot

from kbert_gui.classify.classify_head import CLASSIFY_VERB
from kbert_gui.classify.classify_head import TAG_VERB
from kbert_gui.classify.saliency_format import saliency_caption
from kbert_gui.classify.saliency_format import saliency_document
from kbert_gui.classify.saliency_format import saliency_rows
from kbert_gui.classify.saliency_format import PAIR_SALIENCY_COLUMNS
from kbert_gui.classify.saliency_format import SALIENCY_COLUMNS
from kbert_gui.classify.saliency_outcome import SaliencyOutcome
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.export_files import write_json
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.widgets.probability_text import probability_text

EXPORT_FILTER = "CSV files (*.csv);;JSON files (*.json)"
READY_HINT = (
    "Pick what to explain and a method, then “Why?”: every word-piece of the text gets a score."
)
# The verbs whose results saliency explains, with the hint shown before there is a target.
NO_TARGET_HINT = {
    CLASSIFY_VERB: "Type a text (and a second text, for a pair) to explain its labels.",
    TAG_VERB: "Type a text with entities to explain one of them.",
}


class SaliencyController(QObject):
    """Drives a `SaliencyPanel` beside the tab's results.

    `show_targets(outcome)` offers what the shown `ClassifyOutcome` can explain: every
    label of a classifier (the predicted one first and chosen), for a text or a text
    pair, or every entity of a tagger (clicking one in the entity table picks it); a
    model of another verb offers nothing. "Why?" runs `SaliencyOutcome.compute`
    (`kbert.inference.saliency`) in the app's inference pool; the result is shown only
    while the text and the model are still those scored, and any edit of the text
    clears it. "Export…" saves the shown scores as CSV or JSON.

    Args:
        panel: the `SaliencyPanel`.
        context: the app's `AppContext`.
        text_edit: the tab's input (`TaggedTextEdit`).
        error_banner: the tab's `ErrorBanner`.
    """

    def __init__(self, panel, context, text_edit, error_banner, parent=None):
        super().__init__(parent)
        self.panel = panel
        self.context = context
        self.text_edit = text_edit
        self.error_banner = error_banner
        self.outcome = None
        self._classify_outcome = None
        self.runner = LatestRequestRunner(context.inference_pool, delay_ms=0, parent=self)
        self.runner.result.connect(self._show_saliency)
        self.runner.error.connect(error_banner.show_error)
        self.runner.busy_changed.connect(panel.busy_label.setVisible)
        panel.why_button.clicked.connect(self.request)
        panel.export_button.clicked.connect(self._export_to_chosen_file)
        text_edit.textChanged.connect(self._text_changed)
        self.show_targets(None)

    @property
    def saliency(self):
        """The shown `kbert.inference.TokenSaliency`, or None."""
        return None if self.outcome is None else self.outcome.saliency

    def show_targets(self, outcome):
        """Offers the targets of `outcome` (a `ClassifyOutcome`, or None for none): its
        most probable label (or first entity) first; the user's choice stays only while
        the text (and pair) is the same."""
        previous, self._classify_outcome = self._classify_outcome, outcome
        combo = self.panel.target_combo
        same_inputs = outcome is not None and _inputs(previous) == _inputs(outcome)
        chosen = combo.currentData() if same_inputs else None
        combo.clear()
        verb = None if outcome is None else outcome.head.verb
        self.panel.setVisible(verb in NO_TARGET_HINT)
        if outcome is not None and outcome.classification is not None:
            probabilities = outcome.classification.probabilities
            for label in sorted(probabilities, key=lambda name: -probabilities[name]):
                combo.addItem(f"{label} · {probability_text(probabilities[label])}", label)
        elif outcome is not None and outcome.entities:
            for span in outcome.entities:
                combo.addItem(f"{span.label}: {' '.join(span.text.split())}", span)
        available = combo.count() > 0
        if chosen is not None and combo.findData(chosen) >= 0:
            combo.setCurrentIndex(combo.findData(chosen))
        combo.setEnabled(available)
        self.panel.why_button.setEnabled(available)
        if self.outcome is not None and _inputs(self.outcome) != _inputs(outcome):
            self._clear()
        if self.outcome is None:
            hint = READY_HINT if available else NO_TARGET_HINT.get(verb, "")
            self.panel.caption_label.setText(hint)

    def select_entity(self, span):
        """Makes the tagger's entity `span` the target."""
        for index in range(self.panel.target_combo.count()):
            if self.panel.target_combo.itemData(index) == span:
                self.panel.target_combo.setCurrentIndex(index)
                return

    @Slot()
    def request(self):
        """Scores the shown text's pieces for the chosen target with the chosen method."""
        outcome = self._classify_outcome
        target = self.panel.target_combo.currentData()
        if outcome is None or target is None:
            return
        self.runner.submit(
            SaliencyOutcome.compute,
            self.context.models,
            outcome.source,
            outcome.description.class_name,
            outcome.text,
            target,
            self.panel.method_combo.currentData(),
            outcome.pair,
        )

    @Slot(object)
    def _show_saliency(self, outcome):
        shown = self._classify_outcome
        if (
            outcome.source != self.context.models.source
            or outcome.text != self.text_edit.text()
            or shown is None
            or outcome.pair != shown.pair
        ):
            return  # another model, text or pair since
        self.outcome = outcome
        self.panel.caption_label.setText(saliency_caption(outcome.saliency))
        self.panel.text_view.set_saliency(outcome.saliency)
        self.panel.export_button.setEnabled(True)
        if outcome.notes:
            self.error_banner.show_error(" ".join(outcome.notes))

    @Slot()
    def _text_changed(self):
        if self.outcome is not None and self.outcome.text != self.text_edit.text():
            self._clear()

    def _clear(self):
        self.runner.cancel()
        self.outcome = None
        self.panel.caption_label.setText(READY_HINT if self.panel.why_button.isEnabled() else "")
        self.panel.text_view.clear_saliency()
        self.panel.export_button.setEnabled(False)

    # --- Export -------------------------------------------------------------------

    def write_csv(self, path):
        columns = SALIENCY_COLUMNS if self.saliency.pair is None else PAIR_SALIENCY_COLUMNS
        write_csv(path, columns, saliency_rows(self.saliency))

    def write_json(self, path):
        write_json(path, saliency_document(self.saliency))

    def export(self, path):
        """Writes the shown scores to `path`: JSON for a ".json" name, else CSV."""
        path = pathlib.Path(path)
        if path.suffix.lower() == ".json":
            self.write_json(path)
        else:
            self.write_csv(path if path.suffix else path.with_suffix(".csv"))

    @Slot()
    def _export_to_chosen_file(self):
        chosen = self.context.file_dialogs.save_file(
            self.panel, "Export saliency", EXPORT_FILTER, "exports", "saliency.csv"
        )
        if chosen is None or self.saliency is None:
            return
        try:
            self.export(chosen)
        except (OSError, ValueError) as error:
            self.error_banner.show_error(f"Could not save {chosen}: {error}")


def _inputs(outcome):
    """`(text, pair)` of an outcome (a `ClassifyOutcome` or a `SaliencyOutcome`), or None."""
    return None if outcome is None else (outcome.text, outcome.pair)
