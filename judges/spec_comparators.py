"""The judge specification's comparators: how an observed value must relate to the expected
one, each typed value through its one comparator (`cua.judges.values`). See `cua.judges.spec`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, field_validator, model_validator

from cua.judges.spec_base import Spec, valid_path
from cua.judges.values.web import QueryRule

__all__ = [
    "AbsentCmp",
    "AddressCmp",
    "CellSpec",
    "CellsCmp",
    "ComparatorSpec",
    "ContainsCmp",
    "DateCmp",
    "DateTimeCmp",
    "EmailCmp",
    "EqualsCmp",
    "FormulaCmp",
    "JsonPathCmp",
    "JsonSubsetCmp",
    "LengthCmp",
    "MoneyCmp",
    "MultisetCmp",
    "NumberCmp",
    "PhoneCmp",
    "PresentCmp",
    "RegexCmp",
    "RichTextCmp",
    "SetCmp",
    "TableCmp",
    "TextCmp",
    "TimeCmp",
    "UrlCmp",
    "ValueTypeName",
]


ValueTypeName = Literal["email", "url", "date", "time", "datetime", "money", "number", "text", "rich_text", "formula",
                        "phone", "address", "ini"]


class EqualsCmp(Spec):
    """Exact equality of JSON values (1 == 1.0, True is not 1). With `type`, the same
    shape (lists, objects) whose scalar leaves are equal as that value type
    (`[["{p.email}"]]` with `type: email`: one message to one address, in any case)."""

    op: Literal["equals"]
    value: Any = None
    type: ValueTypeName | None = None


class TextCmp(Spec):
    """Text equality after normalisation: Unicode NFKC, whitespace collapsed and trimmed,
    casefolded unless `case: true`, punctuation dropped when `punctuation: false`. Quotes
    enclosing the whole text ('"Buy milk"' = 'Buy milk') are dropped only with `quotes: true`.
    The defaults follow what is read (`CheckNode`): the agent's answer is judged case and
    enclosing quotes aside (`quotes: true`), a value the app stores (`app_state`, `sql`) with
    its case (`case: true`), since every user sees it as stored; a template may say otherwise."""

    op: Literal["text"]
    value: Any
    case: bool = False
    punctuation: bool = True
    quotes: bool = False


class ContainsCmp(Spec):
    """A string contains `value` (normalised as `text` does), or a list has an element equal to it."""

    op: Literal["contains"]
    value: Any
    case: bool = False
    punctuation: bool = True


class RegexCmp(Spec):
    """`pattern` matches the string (`re.search`; `full: true` for `re.fullmatch`)."""

    op: Literal["regex"]
    pattern: str
    ignore_case: bool = False
    full: bool = False


class NumberCmp(Spec):
    """Numeric equality within tolerance |a-b| <= max(abs, rel*|b|). Strings such as
    "1,234.50", "$12", "-3 %" and "1.234,5" (with `decimal_comma`) are parsed."""

    op: Literal["number"]
    value: Any
    abs: float = Field(0.0, ge=0)
    rel: float = Field(0.0, ge=0)
    decimal_comma: bool = False


class SetCmp(Spec):
    """Equality as sets (order and duplicates ignored); `text: true` normalises strings first."""

    op: Literal["set"]
    values: Any
    text: bool = False


class MultisetCmp(Spec):
    """Equality as multisets (order ignored, counts matter)."""

    op: Literal["multiset"]
    values: Any
    text: bool = False


class JsonSubsetCmp(Spec):
    """Every key of `value` is in the observed object with a matching value (recursively);
    lists must match element-wise unless `list_any: true` (each expected element found)."""

    op: Literal["json_subset"]
    value: Any
    list_any: bool = False


class JsonPathCmp(Spec):
    """Apply a JSON path to the observed value, then compare with the nested comparator."""

    op: Literal["json_path"]
    path: str
    expect: "ComparatorSpec"

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return valid_path(value)


class DateCmp(Spec):
    """Same date (and time, when the expected value carries one) across formats:
    "2026-03-05", "March 5, 2026", "5 Mar 2026", "05/03/2026" (day first only with
    `day_first: true`), "2026-03-05 14:30", "2:30 PM". Times compare to the minute unless
    `seconds: true`. A value holding two dates or times ("March 5 or 6") fails
    (`cua.judges.values.temporal`)."""

    op: Literal["date"]
    value: Any
    day_first: bool = False
    seconds: bool = False


class TimeCmp(Spec):
    """The same wall-clock time ("14:30" = "2:30 PM"), to the minute unless `seconds`; a
    date beside it is not compared; two times ("2 or 3 PM") fail."""

    op: Literal["time"]
    value: Any
    seconds: bool = False


class DateTimeCmp(Spec):
    """The same date and time, both required, in any format `date` reads."""

    op: Literal["datetime"]
    value: Any
    day_first: bool = False
    seconds: bool = False


class EmailCmp(Spec):
    """The same email address: case, enclosing quotes, `mailto:` and a display name
    ("Ana <ana@x.org>") aside; two addresses fail (`cua.judges.values.web`)."""

    op: Literal["email"]
    value: Any


class UrlCmp(Spec):
    """The same URL: scheme and host case, a default port, percent-escapes of unreserved
    characters aside; query parameters compared as a multiset, so a parameter added,
    repeated or missing fails, except those in `ignore_params` (parameters that do not
    change what the page shows) and, unless `blank_is_absent: false`, those with an empty
    value (a blank filter field), and those written with the value the page takes when
    they are absent (`defaults`: `{sort: featured}`: the same page). `query_rules` are the
    app's declared parameters (`QueryRule`: how the app reads each, its default): the task
    loader fills them in from the template's bundled app (`WebApp.query_params`), so a
    template on a bundled app writes no `defaults`, and a parameter the app upper-cases,
    reads as an integer or defaults is compared as the app reads it. A path-only `value`
    ("/c/shoes?sort=price") compares the path, query and fragment. `params` gives the query as name -> value (a list for
    a repeated one), unencoded: `{value: "/c/shoes", params: {brand: "Acme & Co"}}`."""

    op: Literal["url"]
    value: Any
    params: dict[str, str | list[str]] | None = None
    ignore_params: list[str] = Field(default_factory=list)
    blank_is_absent: bool = True
    defaults: dict[str, str] = Field(default_factory=dict)
    query_rules: dict[str, QueryRule] = Field(default_factory=dict)


class MoneyCmp(Spec):
    """The same amount to the cent and the same currency ("$1,234.50" = "1234.5 USD");
    an amount without a currency is in `currency` (or the expected value's); two
    amounts or two currencies fail."""

    op: Literal["money"]
    value: Any
    currency: str | None = None
    decimal_comma: bool = False


class RichTextCmp(Spec):
    """Rich text (HTML) equal by what it shows, not its markup: the same lines (paragraph,
    heading, list item) with the same text and the same inline formatting (bold, italic,
    underline, links); `strong` is `b`, `em` is `i`, `p` is `div`, whitespace collapsed,
    attributes other than href ignored. `formatting: false` compares the text only;
    `case: false` ignores case."""

    op: Literal["rich_text"]
    value: Any
    formatting: bool = True
    case: bool = True


class PhoneCmp(Spec):
    """The same phone number however it is grouped: digits compared, a 10-digit national
    number given the country code `country` ("(555) 010-2000" = "+1 555 010 2000")."""

    op: Literal["phone"]
    value: Any
    country: str = "1"


class AddressCmp(Spec):
    """The same postal address: case, punctuation and line breaks ignored, the usual
    abbreviations spelled out ("St." = "Street", "Apt" = "Apartment", "N" = "North")."""

    op: Literal["address"]
    value: Any


class FormulaCmp(Spec):
    """A spreadsheet formula (the text starts with "="; a typed-in value is not a formula
    and fails). With `value`: the same formula as written, up to absolute references,
    case, spacing and a range's corner order ("=sum($B$2:B7)" = "=SUM(B2:B7)",
    `cua.judges.values.formula`). With `computes` (a formula): the formula computes what
    that one does, judged by re-computing both with the sheets app's evaluator over the
    cells they read, perturbed ("=SUM(B2:B3,B4)" and "=B2+B3+B4" compute "=SUM(B2:B4)";
    "=SUM(B2:B4)*0+9", right today, does not). Which cells a formula names and which
    functions it calls is its shape; only what it computes is judged."""

    op: Literal["formula"]
    value: Any = None
    computes: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "FormulaCmp":
        if (self.value is None) == (self.computes is None):
            raise ValueError("a formula comparator takes either `value` (the formula as written) or `computes` "
                             "(a formula it must compute the same as)")
        if self.computes is not None and not self.computes.startswith("="):
            raise ValueError(f"`computes` is a formula, starting with '=': {self.computes!r}")
        return self


class CellSpec(Spec):
    """One cell of a saved spreadsheet: its `formula` as the file stores it (no "="),
    compared as a formula (`$`, case, spacing and a range's corner order aside; a list
    gives the formulas that count), "" for a plain value (a formula there fails), None
    not compared; its `value` compared as `type`."""

    formula: str | list[str] | None = None
    value: Any = None
    type: Literal["number", "text", "date", "time", "datetime", "money", "email", "url", "phone", "address"] = "number"


class CellsCmp(Spec):
    """Cells of a saved spreadsheet as the office readers print them (one line per filled
    cell, "REF<TAB>f=FORMULA<TAB>v=VALUE"): every cell in `cells` is there, with the
    formula and value it names, each compared as its type (`cua.judges.values`), so an
    absolute reference or another spelling of the value is the same cell."""

    op: Literal["cells"]
    #: A string only as a template's placeholder ("{tax_cells}"), rendered to the mapping.
    cells: dict[str, CellSpec] | str = Field(min_length=1)


ColumnNorm = Literal["exact", "text", "number", "date", "time", "datetime", "phone", "address", "rich_text", "email",
                     "url", "money", "formula"]


class TableCmp(Spec):
    """Rows (list of dicts) equal the expected rows on `columns` (default: the expected
    rows' keys), in order when `ordered`, each column compared as the value type that
    `normalize` names (`cua.judges.values`; `exact`: equal JSON)."""

    op: Literal["table"]
    rows: Any
    ordered: bool = False
    columns: list[str] | None = None
    normalize: dict[str, ColumnNorm] = Field(default_factory=dict)
    #: `text` columns keep their case (`TextCmp.case`); the default for stored rows (`CheckNode`).
    case: bool = False


class LengthCmp(Spec):
    """The observed string or list has min <= len <= max."""

    op: Literal["length"]
    min: int = Field(0, ge=0)
    max: int | None = None


class PresentCmp(Spec):
    """The observed value is not None (and, with `truthy`, not empty/false/0)."""

    op: Literal["present"]
    truthy: bool = False


class AbsentCmp(Spec):
    """The observed value is None or an empty list: e.g. a deleted row's path."""

    op: Literal["absent"]


ComparatorSpec = Annotated[
    Union[
        EqualsCmp, TextCmp, ContainsCmp, RegexCmp, NumberCmp, SetCmp, MultisetCmp, JsonSubsetCmp,
        JsonPathCmp, DateCmp, TimeCmp, DateTimeCmp, EmailCmp, UrlCmp, MoneyCmp, TableCmp, LengthCmp, PresentCmp,
        AbsentCmp, RichTextCmp, PhoneCmp, AddressCmp, FormulaCmp, CellsCmp,
    ],
    Field(discriminator="op"),
]
