"""The settings of a fine-tuning run: `kbert.finetuning.FineTuningConfig` as a form."""

import dataclasses

from PySide6.QtCore import Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QDoubleSpinBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QSizePolicy
from PySide6.QtWidgets import QSpinBox
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QWidget

# name: (label, kind, minimum, maximum, text shown for None), in form order. Kinds:
# "int", "float", "choice" (precision), "devices" (data_parallel: shown only where
# there are several local devices). A field with a None text accepts None, shown
# at the minimum (0). Every `FineTuningConfig` field is here; the defaults and the
# tooltips come from the class itself (`describe_config`).
MAIN_FIELDS = {
    "epochs": ("Epochs", "int", 1, 10_000, None),
    "batch_size": ("Batch size", "int", 1, 65_536, None),
    "learning_rate": ("Learning rate", "float", 1e-8, 1.0, None),
    "warmup_ratio": ("Warm-up ratio", "float", 0.0, 1.0, None),
    "max_length": ("Max length (tokens)", "int", 0, 65_536, "model limit"),
    "patience": ("Patience (epochs)", "int", 0, 10_000, "never stop early"),
    "seed": ("Seed", "int", 0, 2**31 - 1, None),
    "precision": ("Precision", "choice", None, None, None),
    "data_parallel": ("Devices", "devices", None, None, None),
}
ONE_DEVICE = "This device"
ADVANCED_FIELDS = {
    "weight_decay": ("Weight decay", "float", 0.0, 10.0, None),
    "gradient_accumulation_steps": ("Gradient accumulation", "int", 1, 4096, None),
    "clip_norm": ("Gradient clip norm", "float", 0.0, 1e6, "no clipping"),
    "checkpoint_every": ("Checkpoint every (batches)", "int", 0, 10_000_000, "epoch ends only"),
    "eval_batch_size": ("Evaluation batch size", "int", 1, 65_536, None),
}


def describe_config(config_class=None):
    """`{"defaults", "descriptions", "precisions"}` of `FineTuningConfig` (or `config_class`).

    Keras-free (the config and the precisions import no Keras), so the form fills in
    while Keras still loads, on the UI thread. The descriptions are the fields' help
    (`kbert.training.settings`), the text `kbert finetune --help` shows too.
    """
    from kbert.training.precisions import PRECISIONS
    from kbert.training.settings import setting_help
    from kbert.finetuning import FineTuningConfig

    config_class = FineTuningConfig if config_class is None else config_class
    defaults = {field.name: field.default for field in dataclasses.fields(config_class)}
    return {
        "defaults": defaults,
        "descriptions": setting_help(config_class),
        "precisions": tuple(PRECISIONS),
    }


class _WheelWhenFocused:
    """Takes the mouse wheel only while focused: in the scrolling form, a wheel turn
    over an unfocused field scrolls the form and leaves the value alone."""

    def wheelEvent(self, event):
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


class _IntBox(_WheelWhenFocused, QSpinBox):
    pass


class _ChoiceBox(_WheelWhenFocused, QComboBox):
    pass


class _NumberBox(_WheelWhenFocused, QDoubleSpinBox):
    """A spin box for floats that shows `5e-05`, not `0.0000500000`.

    With `multiplicative`, the arrows double or halve the value (learning rates).
    """

    def __init__(self, multiplicative=False, parent=None):
        super().__init__(parent)
        self.setDecimals(12)
        self._multiplicative = multiplicative

    def stepBy(self, steps):
        if self._multiplicative:
            self.setValue(self.value() * 2.0**steps)
        else:
            super().stepBy(steps)

    def textFromValue(self, value):
        return f"{value:g}"

    def valueFromText(self, text):
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text, position):
        stripped = text.strip()
        if stripped == self.specialValueText() and stripped:
            return QValidator.State.Acceptable, text, position
        try:
            value = float(stripped)
        except ValueError:
            return QValidator.State.Intermediate, text, position
        if self.minimum() <= value <= self.maximum():
            return QValidator.State.Acceptable, text, position
        return QValidator.State.Intermediate, text, position


class HyperparameterForm(QWidget):
    """Every `FineTuningConfig` field as a spin box or choice, with kbert's defaults.

    The form is built empty-valued and disabled; `set_config_description` (with the
    result of `describe_config`, called on the UI thread once the tab is wired up) fills
    in the defaults and puts each field's help in its tooltip. The less
    common fields sit in a collapsible "Advanced" section.

    `values()` returns keyword arguments for `FineTuningConfig(...)` (None where a
    field shows its "none" text, e.g. max length "model limit").
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._widgets = {}
        self._specs = {**MAIN_FIELDS, **ADVANCED_FIELDS}
        self._defaults = None
        self._device_count = 1
        # What a run's settings asked for before the device count was known.
        self._wanted_data_parallel = False

        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        for name, spec in MAIN_FIELDS.items():
            form.addRow(spec[0] + ":", self._make_widget(name, spec))
        self.advanced_button = QToolButton()
        self.advanced_button.setObjectName("advancedSettings")
        self.advanced_button.setText("Advanced")
        self.advanced_button.setCheckable(True)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setAutoRaise(True)
        self.advanced_button.setToolTip("Show the less common settings.")
        self.advanced_button.toggled.connect(self._show_advanced)
        form.addRow(self.advanced_button)
        for name, spec in ADVANCED_FIELDS.items():
            form.addRow(spec[0] + ":", self._make_widget(name, spec))
            form.setRowVisible(self._widgets[name], False)
        self._form = form
        self.set_device_count(1)
        self.setEnabled(False)
        self.setToolTip("Loading kbert's defaults…")

    def _show_advanced(self, shown):
        self.advanced_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        for name in ADVANCED_FIELDS:
            self._form.setRowVisible(self._widgets[name], shown)

    def _make_widget(self, name, spec):
        _, kind, minimum, maximum, none_text = spec
        if kind in ("choice", "devices"):
            widget = _ChoiceBox()
        elif kind == "int":
            widget = _IntBox()
            widget.setRange(minimum, maximum)
            widget.setAccelerated(True)
        else:
            widget = _NumberBox(multiplicative=name == "learning_rate")
            widget.setRange(minimum, maximum)
            widget.setSingleStep(0.01 if maximum <= 1.0 else 0.1)
        if none_text is not None:
            widget.setSpecialValueText(none_text)
        if kind not in ("choice", "devices"):
            widget.setAlignment(Qt.AlignmentFlag.AlignRight)
        widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        widget.setMinimumWidth(120)
        # Focus by click or Tab, never by the wheel (see `_WheelWhenFocused`).
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        widget.setObjectName(_object_name(name))
        self._widgets[name] = widget
        return widget

    def widget(self, name):
        """The input of the field `name`."""
        return self._widgets[name]

    def has_field(self, name):
        return name in self._widgets

    @property
    def is_ready(self):
        """Whether the defaults have arrived."""
        return self._defaults is not None

    def set_device_count(self, count):
        """Offers "All local devices (count)" beside "This device" where `count` > 1
        (the Devices row shows only then); with one device, data_parallel is False."""
        self._device_count = max(int(count), 1)
        widget = self._widgets["data_parallel"]
        widget.clear()
        widget.addItem(ONE_DEVICE, False)
        if self._device_count > 1:
            widget.addItem(f"All local devices ({self._device_count})", True)
        self._form.setRowVisible(widget, self._device_count > 1)
        widget.setCurrentIndex(max(widget.findData(self._wanted_data_parallel), 0))

    def set_config_description(self, description):
        """Fills in `describe_config()`'s defaults and tooltips; enables the form."""
        self._defaults = dict(description["defaults"])
        precision = self._widgets["precision"]
        precision.clear()
        precision.addItems(list(description["precisions"]))
        for name, widget in self._widgets.items():
            text = description["descriptions"].get(name, "")
            default = self._defaults.get(name)
            widget.setToolTip(
                f"<p>{text}</p><p><i>Default: {_show(default, self._specs[name][4])}</i></p>"
            )
        self.set_values(**self._form_defaults())
        self.setToolTip("")
        self.setEnabled(True)

    def _form_defaults(self):
        """The defaults of the fields this form shows (the others keep the class's)."""
        return {name: value for name, value in self._defaults.items() if name in self._widgets}

    def defaults(self):
        """kbert's default values (None before `set_config_description`)."""
        return None if self._defaults is None else dict(self._defaults)

    def reset(self):
        """Back to kbert's defaults."""
        if self._defaults is not None:
            self.set_values(**self._form_defaults())

    def set_values(self, **values):
        """Sets fields by name; None selects a field's "none" value."""
        for name, value in values.items():
            if name not in self._widgets:
                raise ValueError(
                    f"Unknown setting {name!r}; the settings are {sorted(self._widgets)}."
                )
            widget = self._widgets[name]
            if name == "data_parallel":
                self._wanted_data_parallel = bool(value)
                widget.setCurrentIndex(max(widget.findData(bool(value)), 0))
            elif isinstance(widget, QComboBox):
                widget.setCurrentText(str(value))
            else:
                widget.setValue(widget.minimum() if value is None else value)

    def values(self):
        """`{field: value}` for `FineTuningConfig(**values)`."""
        values = {}
        for name, widget in self._widgets.items():
            none_text = self._specs[name][4]
            if name == "data_parallel":
                values[name] = bool(widget.currentData())
            elif isinstance(widget, QComboBox):
                values[name] = widget.currentText()
            elif none_text is not None and widget.value() == widget.minimum():
                values[name] = None
            else:
                values[name] = widget.value()
        return values

    def set_field_enabled(self, name, enabled, reason=""):
        """Enables or disables one field; `reason` is appended to its tooltip while off."""
        widget = self._widgets[name]
        widget.setEnabled(enabled)
        widget.setStatusTip(reason if not enabled else "")
        base = widget.toolTip().split("<p><b>")[0]
        widget.setToolTip(base if enabled or not reason else f"{base}<p><b>{reason}</b></p>")


def _object_name(name):
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _show(value, none_text):
    if isinstance(value, bool):
        return "all local devices" if value else ONE_DEVICE.lower()
    if value is None:
        return none_text or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)
