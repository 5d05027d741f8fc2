"""The Sheets UI in German (de-DE), and how a number shows in a cell per locale.

The shared catalogue (`cua.tasks.apps.i18n`) holds the words every app shares; this one the
spreadsheet's own. Cell contents, formulas and sheet names are data: never translated. A
formula is written in one syntax in every locale (`=SUM(A1:A3)`, `3.5`); only how a computed
number *shows* in the grid changes (`3,5` in de-DE).
"""

from __future__ import annotations

__all__ = ["DE", "shown"]

DE: dict[str, str] = {
    "Workbook": "Arbeitsmappe", "cells": "Zellen", "Not found": "Nicht gefunden", "No such sheet.": "Kein solches Tabellenblatt.",
    "Sort range": "Bereich sortieren", "by column": "nach Spalte", "Sort by column": "Nach Spalte sortieren",
    "Sort order": "Sortierreihenfolge", "A → Z, 0 → 9": "A → Z, 0 → 9", "Z → A, 9 → 0": "Z → A, 9 → 0", "Sort": "Sortieren",
    "Add sheet": "Tabellenblatt hinzufügen", "Rename…": "Umbenennen…", "Sheet name": "Name des Tabellenblatts",
    "Save": "Speichern", "Cell name": "Zellname", "Formula bar": "Bearbeitungsleiste", "Sheet tabs": "Tabellenblätter",
    "Edit": "Bearbeiten", "Could not save": "Speichern fehlgeschlagen",
    "The range is not a range of cells (write it as A2:F41).": "Der Bereich ist kein Zellbereich (schreiben Sie ihn als A2:F41).",
    "The sort column is not inside the range.": "Die Sortierspalte liegt nicht im Bereich.",
}


def shown(display: str, is_number: bool, locale: str) -> str:
    """A computed cell as the grid shows it: `1234.5` in en-US, `1234,5` in de-DE (a number's
    decimal point only; text and errors as they are)."""
    if locale != "de-DE" or not is_number:
        return display
    return display.replace(".", ",")
