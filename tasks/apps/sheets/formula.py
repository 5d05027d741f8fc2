"""The sheets app's formula language. It is `cua.judges.values.spreadsheet`: the formula
judge re-computes an agent's formula with the very evaluator the app computes its cells
with, so the two can never disagree about what a formula computes."""

from cua.judges.values.spreadsheet import (
    MAX_COLS,
    MAX_ROWS,
    CellError,
    Value,
    col_index,
    col_name,
    display,
    evaluate,
    evaluate_sheet,
    literal,
    parse_ref,
    references,
    shift_formula,
)

__all__ = ["MAX_COLS", "MAX_ROWS", "CellError", "Value", "col_index", "col_name", "display", "evaluate", "evaluate_sheet",
           "literal", "parse_ref", "references", "shift_formula"]
