"""A UFM Telemetry CSV body -> a ``Sample``, read columnar by pyarrow; or one clear error.

The fast path reads the columns this package uses with their types (counters ``uint64``, nothing nullable), and
checks the rest in arrays. A body the fast path refuses is read again slowly, only to name the first bad line and
column: pyarrow's own messages name neither reliably (the row number is lost when it parses in threads).

Rows map to lines one to one (an empty line or a quoted line end is a row with the wrong number of fields), so
row ``i`` is line ``i + 2``.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from fabric.errors import quoted
from fabric.telemetry.body import DEFAULT_LIMITS, BodyCheck, BodyLimits, checked_body
from fabric.telemetry.columns import NODE_GUID, PORT_NUMBER, REQUIRED_COLUMNS, TEMPERATURE, TIMESTAMP, Counter
from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.sample import Sample
from topology.errors import InputError
from topology.inputs import open_input

__all__ = ["parse_sample", "read_body", "read_sample", "sample_time"]

_READ_CHUNK = 1 << 20
_FIRST_ROW_LINE = 2
_LATEST_US = 32503680000 * 10**6
"""3000-01-01 UTC, the latest instant the service takes (``fabric.bounded.LATEST``)."""
_PORT_NUMBERS = 1 << 16
_GUID = re.compile(r"(?:0[xX])?([0-9a-fA-F]{1,16})")
_ABSENT_TEMPERATURES = ["", "NA", "N/A"]
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?$"
_COUNTERS = frozenset(counter.value for counter in Counter)
_TYPES = {TIMESTAMP: pa.int64(), NODE_GUID: pa.string(), PORT_NUMBER: pa.int64(), TEMPERATURE: pa.string(),
          **{counter.value: pa.uint64() for counter in Counter}}
_WHOLE = {TIMESTAMP: (r"^ *[0-9]{1,18} *$", "not a timestamp (microseconds since the epoch)"),
          PORT_NUMBER: (r"^ *[0-9]{1,5} *$", "not a port number"),
          **{counter.value: (r"^ *(0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20}) *$",
                             "not a counter value (a whole number, 0 or more)") for counter in Counter}}
"""What the slow path checks a typed column's text against, and how it words a refusal."""


def parse_sample(data: bytes, source: str, limits: BodyLimits = DEFAULT_LIMITS) -> Sample:
    """``data``, a whole body as UFM Telemetry serves it, as a ``Sample``; ``TelemetryInputError`` naming
    ``source``, the line and the column of the first problem otherwise."""
    return _parse(checked_body((data,), source, limits), source)


def read_sample(path: str | os.PathLike[str], limits: BodyLimits = DEFAULT_LIMITS) -> Sample:
    """The sample in the file ``path`` (a recorded one), read a chunk at a time within ``limits``."""
    return _parse(read_body(path, limits), str(path))


def sample_time(path: str | os.PathLike[str], limits: BodyLimits = DEFAULT_LIMITS) -> int:
    """The time of the sample in the file ``path`` (its newest row's, microseconds), reading its timestamp
    column only; a file whose timestamps cannot be read is parsed whole for the error that names its line."""
    source = str(path)
    body = read_body(path, limits)
    _check_line_ends(body, source)
    _check_header(body, source)
    try:
        times = _column(_read(body, {TIMESTAMP: pa.int64()}, columns=[TIMESTAMP]), TIMESTAMP).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        times = None
    if times is None or not len(times) or times.min() <= 0 or times.max() >= _LATEST_US:
        return _parse(body, source).time_us
    return int(times.max())


def read_body(path: str | os.PathLike[str], limits: BodyLimits = DEFAULT_LIMITS) -> bytes:
    """The content of the file ``path``, read a chunk at a time within ``limits`` (``body.BodyCheck``)."""
    source = str(path)
    check = BodyCheck(source, limits)
    try:
        with open_input(path) as stream:
            while chunk := stream.read(_READ_CHUNK):
                check.feed(chunk)
    except InputError as exc:
        if isinstance(exc, TelemetryInputError):
            raise
        raise TelemetryInputError(exc.message, source=source) from None
    except OSError as exc:
        raise TelemetryInputError(f"cannot read: {exc.strerror or exc}", source=source) from None
    return check.body()


def _parse(body: bytes, source: str) -> Sample:
    _check_line_ends(body, source)
    _check_header(body, source)
    table = _table(body, source).combine_chunks()
    rows = table.num_rows
    if not rows:
        raise TelemetryInputError("no rows: a header alone", source=source, line=_FIRST_ROW_LINE)
    times = _column(table, TIMESTAMP).to_numpy()
    _refuse_first(source, TIMESTAMP, (times <= 0) | (times >= _LATEST_US), times,
                  "not a time between 1970 and 3000 in microseconds")
    guids, guid_index, port_numbers = _ports(table, source)
    newest = int(np.argmax(times))
    return Sample(
        source=source,
        time_us=int(times[newest]),
        newest_line=newest + _FIRST_ROW_LINE,
        guids=guids,
        guid_index=guid_index,
        port_numbers=port_numbers,
        row_time_us=times,
        counters={counter: _column(table, counter.value).to_numpy() for counter in Counter},
        temperature=_temperatures(_column(table, TEMPERATURE), source),
    )


def _check_line_ends(body: bytes, source: str) -> None:
    """A carriage return ends a line only before a line feed: pyarrow would take a lone one for a line end that
    the line numbers of errors do not count."""
    if body.find(b"\r") >= 0 and body.count(b"\r") != body.count(b"\r\n"):
        where = next(i for i in range(len(body)) if body[i] == 0x0D and body[i + 1:i + 2] != b"\n")
        raise TelemetryInputError("a carriage return that ends no line", source=source,
                                  line=body.count(b"\n", 0, where) + 1)


def _check_header(body: bytes, source: str) -> None:
    line = body[:body.index(b"\n")].rstrip(b"\r")
    try:
        names = next(csv.reader([line.decode()]), [])
    except (UnicodeDecodeError, csv.Error):
        raise TelemetryInputError("the header is not a CSV line of column names", source=source, line=1) from None
    for name in REQUIRED_COLUMNS:
        count = names.count(name)
        if count != 1:
            what = "named twice in the header" if count else "missing from the header: not UFM Telemetry's CSV?"
            raise TelemetryInputError(what, source=source, line=1, column=name)


def _table(body: bytes, source: str) -> Any:
    try:
        return _read(body, _TYPES)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        _locate(body, source)
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TelemetryInputError(f"not a telemetry CSV: {first}", source=source) from None


def _read(body: bytes, types: dict[str, Any], *, handler: Any = None,
          columns: Sequence[str] = REQUIRED_COLUMNS) -> Any:
    return pacsv.read_csv(
        pa.BufferReader(body),
        read_options=pacsv.ReadOptions(use_threads=handler is None),
        parse_options=pacsv.ParseOptions(ignore_empty_lines=False, invalid_row_handler=handler),
        convert_options=pacsv.ConvertOptions(include_columns=list(columns), column_types=types,
                                             null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False),
    )


def _locate(body: bytes, source: str) -> None:
    """Raise the error that names the first bad row of ``body`` (which the fast path refused): a row with the
    wrong number of fields, else the first cell that is not what its column holds."""
    bad: list[Any] = []

    def first_bad(row: Any) -> str:
        bad.append(row)
        return "error"

    try:
        text = _read(body, dict.fromkeys(REQUIRED_COLUMNS, pa.string()), handler=first_bad).combine_chunks()
    except pa.ArrowInvalid:
        if not bad:
            raise
        row = bad[0]
        raise TelemetryInputError(f"{row.actual_columns} fields where the header names {row.expected_columns}",
                                  source=source, line=row.number) from None
    for name, (pattern, why) in _WHOLE.items():
        column = _column(text, name)
        good = pc.match_substring_regex(column, pattern).to_numpy(zero_copy_only=False)
        if name in _COUNTERS:
            good &= _fits_uint64(column)
        _refuse_first(source, name, ~good, column, why)


def _column(table: Any, name: str) -> Any:
    """One column of a table whose chunks were combined, as one array."""
    return table.column(name).combine_chunks()


def _fits_uint64(column: Any) -> Any:
    """Whether each counter's text (decimal, or hexadecimal after ``0x``, as pyarrow reads both) fits 64 bits."""
    long = pc.greater_equal(pc.utf8_length(pc.utf8_trim_whitespace(column)), 20).to_numpy(zero_copy_only=False)
    fits = np.ones(len(long), dtype=bool)
    for row in np.flatnonzero(long).tolist():
        text = column[row].as_py().strip()
        fits[row] = not text.isdigit() or int(text) < 1 << 64
    return fits


def _refuse_first(source: str, column: str, bad: Any, values: Any, why: str) -> None:
    """Raise naming the first row where ``bad`` holds, if any, with its value (``values[row]``: a numpy or a
    pyarrow array)."""
    rows = np.flatnonzero(bad)
    if len(rows):
        row = int(rows[0])
        value = values[row]
        shown = value.as_py() if isinstance(value, pa.Scalar) else value.item()
        raise TelemetryInputError(f"{quoted(shown)}: {why}", source=source, line=row + _FIRST_ROW_LINE,
                                  column=column)


def _ports(table: Any, source: str) -> tuple[Any, Any, Any]:
    """Each row's port: the distinct GUIDs as numbers (sorted), each row's index into them, and its port number;
    a port given two rows refused. The GUIDs are read once each (a sample of 200,000 rows has some 35,000), not
    once a row."""
    encoded = _column(table, NODE_GUID).dictionary_encode()
    texts = encoded.dictionary.to_pylist()
    values = []
    for row, text in enumerate(texts):
        match = _GUID.fullmatch(text)
        if match is None:
            first = int(np.argmax(encoded.indices.to_numpy(zero_copy_only=False) == row))
            raise TelemetryInputError(f"{quoted(text)}: not a GUID", source=source, line=first + _FIRST_ROW_LINE,
                                      column=NODE_GUID)
        values.append(int(match.group(1), 16))
    guids, of_text = np.unique(np.array(values, dtype=np.uint64), return_inverse=True)
    guid_index = of_text[encoded.indices.to_numpy(zero_copy_only=False)]
    numbers = _column(table, PORT_NUMBER).to_numpy()
    _refuse_first(source, PORT_NUMBER, (numbers < 0) | (numbers >= _PORT_NUMBERS), numbers, "not a port number")
    keys = guid_index.astype(np.uint64) << np.uint64(16) | numbers.astype(np.uint64)
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(repeated):
        again = order[repeated + 1]
        row = int(again.min())
        earlier = int(order[repeated[int(np.argmin(again))]])
        raise TelemetryInputError(
            f"port {int(guids[guid_index[row]]):016x}_{int(numbers[row])} has a row already, at line "
            f"{earlier + _FIRST_ROW_LINE}", source=source, line=row + _FIRST_ROW_LINE, column=NODE_GUID)
    return guids, guid_index, numbers.astype(np.uint16)


def _temperatures(column: Any, source: str) -> Any:
    """°C as floats, NaN for no reading: empty, ``NA``, ``N/A`` or 0 (the PDR plugin's reading of them); a
    trailing ``C`` allowed. Text that is no number, NaN and infinities refused."""
    text = pc.utf8_rtrim(pc.utf8_trim_whitespace(column), "C")
    absent = pc.is_in(text, value_set=pa.array(_ABSENT_TEMPERATURES))
    good = pc.or_(absent, pc.match_substring_regex(text, _DECIMAL)).to_numpy(zero_copy_only=False)
    _refuse_first(source, TEMPERATURE, ~good, column, "not a temperature (°C)")
    degrees = pc.cast(pc.if_else(absent, "0", text), pa.float64()).to_numpy(zero_copy_only=False)
    return np.where(degrees == 0, np.nan, degrees)
