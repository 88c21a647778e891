"""At the window's minimum size the QA answers' "Answer" title and the training chart's
legend are whole (the title was cut to "nswe", the legend to "evalu")."""

from gui_helpers import open_window_at_minimum_size
from gui_helpers import stop_context

from kbert_gui.question_answering.answer_list_model import ANSWER_COLUMN
from kbert_gui.tab_key import TabKey

# A header section's margins and sort indicator, as the app's tables count them.
TITLE_MARGIN = 16


def test_the_answer_title_and_the_chart_legend_are_whole_at_the_minimum_size(qtbot, tmp_path):
    window = open_window_at_minimum_size(qtbot, tmp_path)
    try:
        window.tabs.setCurrentWidget(window.tab(TabKey.QUESTION_ANSWERING))
        qtbot.wait(10)
        panel = window.tab(TabKey.QUESTION_ANSWERING)
        header = panel.answers_view.horizontalHeader()
        title = panel.answers_model.headerData(ANSWER_COLUMN, header.orientation())
        needed = header.fontMetrics().horizontalAdvance(title) + TITLE_MARGIN
        assert header.sectionSize(ANSWER_COLUMN) >= needed

        fine_tuning = window.tab(TabKey.FINE_TUNING)
        window.tabs.setCurrentWidget(fine_tuning)
        fine_tuning.pages.setCurrentIndex(1)
        qtbot.wait(10)
        chart = fine_tuning.chart
        chart.set_names("training loss", "evaluation accuracy (matthews correlation)")
        chart.add_loss_point(1, 0.5)
        chart.add_metric_point(1, 0.75)
        entries = chart.legend_entries()
        assert [entry.rect.right() <= chart.width() for entry in entries] == [True, True]
        for entry in entries:
            assert chart.fontMetrics().horizontalAdvance(entry.shown) <= entry.rect.width() + 1
            if entry.shown != entry.text:
                assert entry.shown.endswith("…")
                assert entry.text in chart.legend_tooltip()
    finally:
        stop_context(window.context)
