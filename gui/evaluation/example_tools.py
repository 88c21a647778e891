"""LIT's habits beside the evaluation table: edit an example and predict it again; a map
of the examples' embeddings whose selection is the table's."""

from PySide6.QtCore import QItemSelection
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QTabWidget
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.evaluation.embedding_map import EmbeddingMap
from kbert_gui.evaluation.example_editor import ExampleEditor
from kbert_gui.evaluation.example_prediction import ExamplePrediction
from kbert_gui.evaluation.example_prediction import map_coordinates
from kbert_gui.services.latest_request_runner import LatestRequestRunner

# What colours the map's points: the title offered, and the row's value for it.
COLOURINGS = {
    "Gold label": lambda record: record["gold"],
    "Prediction": lambda record: record["predicted"],
    "Right or wrong": lambda record: "right" if record["correct"] else "wrong",
}


class ExampleTools(QTabWidget):
    """Two pages for a classifier's evaluation: "Edit and predict" (`editor`, an
    `ExampleEditor` on the table's current row; the prediction, with its saliency,
    replaces the row's in place) and "Map" (`map`, an `EmbeddingMap` of the examples'
    sentence embeddings, coloured by `colour_box`; a click selects the rows, a table
    selection rings the points). Model work runs on the app's inference pool.

    Args:
        browser: the `EvaluationBrowser` (its `table`, `rows_model`, `filter_model`).
        pool: the app's inference `WorkerPool`; models: its `ModelStore`.
        source: the evaluated model; head: its model class's name.
        other_source: the second model where two are compared (an edited example is
            predicted by both), else None.
    """

    def __init__(self, browser, pool, models, source, head, other_source=None, parent=None):
        super().__init__(parent)
        self.setObjectName("exampleTools")
        self._browser = browser
        self._model = (models, source, head)
        self._other_source = other_source
        records = browser.rows_model.records
        self.editor = ExampleEditor(bool(records) and "pair" in records[0])
        self.editor.predict_requested.connect(self.predict)
        self.predictions = LatestRequestRunner(pool, delay_ms=0, parent=self)
        self.predictions.result.connect(self._predicted)
        self.predictions.error.connect(self.editor.show_error)
        self.map = EmbeddingMap()
        self.map.selection_changed.connect(self._select_rows)
        self.coordinates = LatestRequestRunner(pool, delay_ms=0, parent=self)
        self.coordinates.result.connect(self._placed)
        self.coordinates.error.connect(lambda message: self.map.set_message(f"No map: {message}"))
        self.colour_box = QComboBox()
        self.colour_box.addItems(list(COLOURINGS))
        self.colour_box.currentTextChanged.connect(self._colour)
        self.addTab(self.editor, "Edit and predict")
        self.addTab(self._map_page(), "Map")
        self.currentChanged.connect(lambda index: index == 1 and self.compute_map())
        selection = browser.table.selectionModel()
        selection.currentRowChanged.connect(self._current_changed)
        selection.selectionChanged.connect(self._table_selection_changed)

    def _map_page(self):
        page = QWidget()
        colours = QHBoxLayout()
        colours.addWidget(QLabel("Colour by:"))
        colours.addWidget(self.colour_box, 1)
        layout = QVBoxLayout(page)
        layout.addLayout(colours)
        layout.addWidget(self.map, 1)
        return page

    def predict(self, position, text, pair):
        """Predicts the record `position` again on `text` (and `pair`), in a worker."""
        models, source, head = self._model
        self.predictions.submit(
            ExamplePrediction.compute, models, source, head, position, text, pair,
            self._other_source,
        )

    def compute_map(self):
        """Computes the map's points (once), in a worker."""
        if self.coordinates.busy or self.map.legend():
            return
        self.map.set_message("Computing the examples' embeddings…")
        models, source, head = self._model
        records = list(self._browser.rows_model.records)
        self.coordinates.submit(map_coordinates, models, source, head, records)

    def _predicted(self, prediction):
        rows_model = self._browser.rows_model
        old = rows_model.records[prediction.position]
        rows_model.replace_record(prediction.position, prediction.record(old))
        self.editor.show_prediction(prediction)
        self._colour()

    def _placed(self, coordinates):
        self.map.set_points(coordinates, self._values())
        self._table_selection_changed()

    def _values(self):
        value = COLOURINGS[self.colour_box.currentText()]
        return [value(record) for record in self._browser.rows_model.records]

    def _colour(self, *_):
        if self.map.legend():
            self.map.set_values(self._values())

    def _current_changed(self, current, _previous):
        if not current.isValid():
            self.editor.show_record(None, None)
            return
        (position,) = self._browser.filter_model.records_at([current.row()]).tolist()
        self.editor.show_record(position, self._browser.rows_model.records[position])

    def _selected_positions(self):
        rows = sorted({index.row() for index in self._browser.table.selectionModel().selectedRows()})
        return self._browser.filter_model.records_at(rows).tolist()

    def _table_selection_changed(self, *_):
        self.map.set_selected(self._selected_positions())

    def _select_rows(self, positions):
        view = self._browser.filter_model
        selection = QItemSelection()
        last = view.columnCount() - 1
        for row in view.rows_of(positions).tolist():
            selection.select(view.index(row, 0), view.index(row, last))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
        model = self._browser.table.selectionModel()
        model.select(selection, flags)
        if not selection.isEmpty():
            self._browser.table.scrollTo(selection.indexes()[0])
