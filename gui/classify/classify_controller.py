"""The "Classify & tag" tab's behaviour: requests as you type, results into the views."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Slot

from kbert_gui.classify.classify_format import NO_HEAD_MESSAGE
from kbert_gui.classify.classify_format import NOT_SHOWN_MESSAGE
from kbert_gui.classify.classify_format import UNTRAINED_HEAD_MESSAGE
from kbert_gui.classify.classify_format import choice_headline
from kbert_gui.classify.classify_format import classification_headline
from kbert_gui.classify.classify_format import entities_headline
from kbert_gui.classify.classify_format import entity_colors
from kbert_gui.classify.classify_format import head_summary
from kbert_gui.classify.classify_format import pair_note
from kbert_gui.classify.classify_format import value_headline
from kbert_gui.classify.classify_head import CHOOSE_VERB
from kbert_gui.classify.classify_head import TAG_VERB
from kbert_gui.classify.classify_head import ClassifyHead
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
        self._head = None
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
        """The second text, or None when it is empty or the model's verb takes none."""
        if self._head is None or not self._head.takes_pair:
            return None
        return self.panel.pair_edit.toPlainText() or None

    def endings(self):
        """The endings to choose from, or None when the model's verb takes none."""
        if self._head is None or not self._head.takes_endings:
            return None
        return self.panel.endings_editor.endings()

    def aggregation(self):
        return self.panel.aggregation_combo.currentData()

    @Slot()
    def request(self):
        """Queues a prediction for the current text (debounced)."""
        self._show_pair_note()
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
        if outcome.head != self._head:
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
        elif outcome.value is not None:
            self._clear_results()
            self.outcome = outcome
            self.panel.headline_label.setText(value_headline(outcome.value))
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
        head = self._head = None if description is None else ClassifyHead.of(description)
        panel = self.panel
        panel.pair_edit.setVisible(head is not None and head.takes_pair)
        tagger = head is not None and head.verb == TAG_VERB
        panel.aggregation_label.setVisible(tagger)
        panel.aggregation_combo.setVisible(tagger)
        choosing = head is not None and head.verb == CHOOSE_VERB
        panel.endings_title.setVisible(choosing)
        panel.endings_editor.setVisible(choosing)
        panel.text_title.setText("<b>Con&text</b>" if choosing else "<b>&Text</b>")
        panel.text_edit.setPlaceholderText(
            "Type a context; its endings go below…" if choosing else "Type or paste a text…"
        )
        page = ENTITIES_PAGE if tagger else CHOICES_PAGE if choosing else LABELS_PAGE
        panel.results_stack.setCurrentIndex(page)
        if head is None:
            panel.head_label.setText(f"Loading {short_name(self.context.models.source)}…")
        elif head.shown:
            panel.head_label.setText(head_summary(description, head))
        panel.head_label.setVisible(head is None or head.shown)
        self._show_warning(description)
        self._show_pair_note()

    def _show_pair_note(self):
        """Says, below the second text, when it does not suit what the classifier read
        in training (single texts given a pair, or pairs given none)."""
        note = "" if self._head is None else pair_note(self._head, self.pair())
        self.panel.pair_note.setText(note)
        self.panel.pair_note.setVisible(bool(note))

    def _show_warning(self, description, fresh_heads=()):
        """Warns of a model without a head the tab runs, or with an untrained one."""
        warning = self.panel.head_warning
        if description is not None and not ClassifyHead.of(description).shown:
            warning.show_warning(_not_shown_message(description))
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


def _not_shown_message(description):
    """Why the tab runs nothing for a model: it has no task head (it is a base model),
    or its head's results are another tab's (its row's tab)."""
    if not description.is_fine_tuned:
        return NO_HEAD_MESSAGE.format(name=description.title)
    tab = description.tab_key
    where = "" if tab == TabKey.CLASSIFY else f" (the {tab.link} does)"
    return NOT_SHOWN_MESSAGE.format(name=description.title, kind=description.kind, where=where)
