"""The "Classify & tag" tab's behaviour: requests as you type, results into the views."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Slot

from kbert_gui.classify.classify_format import NO_HEAD_MESSAGE
from kbert_gui.classify.classify_format import UNTRAINED_HEAD_MESSAGE
from kbert_gui.classify.classify_format import choice_headline
from kbert_gui.classify.classify_format import classification_headline
from kbert_gui.classify.classify_format import entities_headline
from kbert_gui.classify.classify_format import entity_colors
from kbert_gui.classify.classify_format import head_summary
from kbert_gui.classify.classify_outcome import CHOICE_CLASS
from kbert_gui.classify.classify_outcome import CLASSIFIER_CLASS
from kbert_gui.classify.classify_outcome import HEAD_CLASSES
from kbert_gui.classify.classify_outcome import TAGGER_CLASS
from kbert_gui.classify.classify_outcome import ClassifyOutcome
from kbert_gui.classify.classify_panel import CHOICES_PAGE
from kbert_gui.classify.classify_panel import ENTITIES_PAGE
from kbert_gui.classify.classify_panel import LABELS_PAGE
from kbert_gui.classify.saliency_controller import SaliencyController
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.services.model_description import short_name
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style

class ClassifyController(QObject):
    """Drives a `ClassifyPanel`: runs the current model's head on the text as it changes.

    Each edit of the text, the pair, the endings or the option submits a
    `ClassifyOutcome.compute` request to the app's inference pool through `runner`, a
    `LatestRequestRunner` debounced as typing is (`TYPING_DELAY_MS`), so a newer text
    supersedes a stale one and the window never waits for the model. An outcome is
    shown only while its text, pair, endings and model are still the current ones: a
    classifier's labels with probability bars, a tagger's entities highlighted in the
    text and listed in the table, or a multiple-choice model's endings with a
    probability bar each, the chosen one marked. The first outcome for a model (also
    for an empty text) tells its head: the pair field is shown for a classifier, the
    sub-word option for a tagger, the endings (with the text as their context) for a
    multiple-choice model, and a model with none of these heads gets a warning instead
    of results.

    Args:
        panel: the `ClassifyPanel` (also the parent).
        context: the app's `AppContext`.
    """

    def __init__(self, panel, context):
        super().__init__(panel)
        self.panel = panel
        self.context = context
        self.outcome = None
        self._class_name = None
        self.runner = LatestRequestRunner(context.inference_pool, parent=self)
        self.runner.result.connect(self._show_outcome)
        self.runner.error.connect(self._show_error)
        self.runner.busy_changed.connect(panel.busy_label.setVisible)
        self.saliency = SaliencyController(
            panel.saliency_panel, context, panel.text_edit, panel.error_banner, parent=self
        )
        panel.entities_view.clicked.connect(
            lambda index: self.saliency.select_entity(panel.entities_model.entity(index.row()))
        )

        panel.text_edit.textChanged.connect(self.request)
        panel.pair_edit.textChanged.connect(self.request)
        panel.endings_editor.endings_changed.connect(self.request)
        panel.aggregation_combo.currentIndexChanged.connect(self.request)
        panel.head_warning.linkActivated.connect(
            lambda href: context.follow_link(href, TabKey.CLASSIFY)
        )
        context.models.source_changed.connect(self._source_changed)
        self._show_head(None)
        self.request()

    def pair(self):
        """The second text, or None when it is empty or the model is not a classifier."""
        if self._class_name != CLASSIFIER_CLASS:
            return None
        return self.panel.pair_edit.toPlainText() or None

    def endings(self):
        """The endings to choose from, or None when the model is not a multiple-choice one."""
        if self._class_name != CHOICE_CLASS:
            return None
        return self.panel.endings_editor.endings()

    def aggregation(self):
        return self.panel.aggregation_combo.currentData()

    @Slot()
    def request(self):
        """Queues a prediction for the current text (debounced)."""
        self.runner.submit(
            ClassifyOutcome.compute,
            self.context.models,
            self.context.models.source,
            self.panel.text_edit.text(),
            self.pair(),
            self.aggregation(),
            self.endings(),
        )

    # --- Results ------------------------------------------------------------------

    @Slot(object)
    def _show_outcome(self, outcome):
        if outcome.source != self.context.models.source:
            return  # another model since: its request is due
        if outcome.description.class_name != self._class_name:
            self._show_head(outcome.description)
            if outcome.pair != self.pair() or outcome.endings != self.endings():
                self.request()  # the pair's or endings' meaning changed with the head
                return
        if (
            outcome.text != self.panel.text_edit.text()
            or outcome.pair != self.pair()
            or outcome.endings != self.endings()
        ):
            return  # edited since: a newer request is due
        self.panel.error_banner.clear_error()
        self._show_warning(outcome.description, outcome.fresh_heads)
        self.outcome = outcome if outcome.has_head else None
        if outcome.classification is not None:
            self._show_classification(outcome)
        elif outcome.entities is not None:
            self._show_entities(outcome)
        elif outcome.choice is not None:
            self._show_choice(outcome)
        else:
            self._clear_results()
        self.saliency.show_targets(outcome)
        if outcome.notes:
            self.panel.error_banner.show_error(" ".join(outcome.notes))

    def _show_classification(self, outcome):
        self.panel.labels_model.set_classification(outcome.classification)
        self.panel.headline_label.setText(classification_headline(outcome.classification))
        self.panel.results_stack.setCurrentIndex(LABELS_PAGE)

    def _show_choice(self, outcome):
        self.panel.choices_model.set_choice(outcome.choice)
        self.panel.headline_label.setText(choice_headline(outcome.choice))
        self.panel.results_stack.setCurrentIndex(CHOICES_PAGE)

    def _show_entities(self, outcome):
        colors = entity_colors(outcome.description.entity_types)
        self.panel.text_edit.set_entities(outcome.text, outcome.entities, colors)
        self.panel.entities_model.set_entities(outcome.entities, colors)
        self.panel.headline_label.setText(entities_headline(outcome.entities))
        self.panel.legend_label.setText(
            " ".join(
                f'<span style="background:{color}; color:{style.INK}">&nbsp;{name}&nbsp;</span>'
                for name, color in colors.items()
            )
        )
        self.panel.results_stack.setCurrentIndex(ENTITIES_PAGE)

    def _clear_results(self):
        self.outcome = None
        self.panel.labels_model.clear()
        self.panel.entities_model.clear()
        self.panel.choices_model.clear()
        self.panel.text_edit.clear_entities()
        self.panel.headline_label.setText("—")
        self.saliency.show_targets(None)

    @Slot(str)
    def _show_error(self, message):
        self.panel.error_banner.show_error(message)

    def _show_head(self, description):
        """Shapes the tab for the model's head (None: not known yet)."""
        self._class_name = None if description is None else description.class_name
        panel = self.panel
        panel.pair_edit.setVisible(self._class_name == CLASSIFIER_CLASS)
        tagger = self._class_name == TAGGER_CLASS
        panel.aggregation_label.setVisible(tagger)
        panel.aggregation_combo.setVisible(tagger)
        choosing = self._class_name == CHOICE_CLASS
        panel.endings_title.setVisible(choosing)
        panel.endings_editor.setVisible(choosing)
        panel.text_title.setText("<b>Con&text</b>" if choosing else "<b>&Text</b>")
        panel.text_edit.setPlaceholderText(
            "Type a context; its endings go below…" if choosing else "Type or paste a text…"
        )
        page = ENTITIES_PAGE if tagger else CHOICES_PAGE if choosing else LABELS_PAGE
        panel.results_stack.setCurrentIndex(page)
        has_head = description is not None and _has_head(description)
        if description is None:
            panel.head_label.setText(f"Loading {short_name(self.context.models.source)}…")
        elif has_head:
            panel.head_label.setText(head_summary(description))
        panel.head_label.setVisible(description is None or has_head)
        self._show_warning(description)

    def _show_warning(self, description, fresh_heads=()):
        """Warns of a model without a head the tab runs, or with an untrained one."""
        warning = self.panel.head_warning
        if description is not None and not _has_head(description):
            warning.show_warning(NO_HEAD_MESSAGE.format(name=description.title))
        elif fresh_heads:
            heads = ", ".join(fresh_heads)
            warning.show_warning(UNTRAINED_HEAD_MESSAGE.format(kind=description.kind, heads=heads))
        else:
            warning.clear_warning()

    @Slot(str)
    def _source_changed(self, source):
        self.runner.cancel()
        self.panel.error_banner.clear_error()
        self._clear_results()
        self._show_head(None)
        self.request()


def _has_head(description):
    """Whether a `ModelDescription` is a classifier's, a tagger's or a multiple-choice model's."""
    return description.class_name in HEAD_CLASSES
