"""Sources read part by part, in bounded memory: Parquet files, CSV files, and a user's
iterables of chunks (fastml.fit_stream reads them; the CLI's --chunk-rows predicts from them).

A reader is one class with this small interface (docs/developers/architecture.rst: a new
kind of source is one more class and one more line in `open_source`):
- ``repeatable``: the source can be read again (a file, a callable returning an iterable);
- ``threads``: it may be read from a background thread (a user's iterable may not be safe);
- ``columnar``: reading a few columns costs a fraction of reading all (Parquet; a CSV file
  is parsed whole whatever is asked);
- ``column_names()``: the columns (None when only the chunks know them);
- ``total_rows()``: the number of rows if known without a pass (for progress), else None;
- ``batches(columns, chunk_rows)``: one pass, an iterator of chunks. Files give Arrow tables of
  exactly chunk_rows rows (the last may be shorter) holding `columns` (None: all); an
  iterable gives its own chunks, (X, y[, sample_weight]) tuples or DataFrames, whatever was
  asked.
A file reader holds at most one block of the file (its buffer) besides the table it yields.

The executors build their parts' arrays from Arrow tables with `numeric_matrix` and
`column_values` (a stream's chunks, a Spark partition's batches).

pyarrow is imported only when a file is read, so `import fastml` works without it.
"""
import glob
import os
import queue
import re
import threading

import numpy as np

from ._extras import require

CHUNK_BYTES = 16 << 20  # the default chunk: about 16 MB of float64 features
BLOCK_BYTES = 1 << 22   # a CSV block: column types are inferred from the first
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".csv.bz2")


def open_source(source, text_columns=(), labels=None, block_bytes=BLOCK_BYTES):
    """The reader of a source: the path of a Parquet file, a directory of them or a glob, the
    path of a CSV file, an iterable of chunks or a callable returning a fresh one.
    text_columns: CSV columns read as text; labels: the CSV columns that keep an integer type
    (see CSVReader); block_bytes: a CSV block."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        lowered = path.lower()
        if lowered.endswith(CSV_SUFFIXES):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"no CSV file {path!r}")
            return CSVReader(path, text_columns, labels, block_bytes)
        if os.path.isdir(path) or lowered.endswith(PARQUET_SUFFIXES) or glob.has_magic(path):
            return ParquetReader(path)
        raise ValueError(f"cannot tell the format of {path!r}: give a .parquet / .csv file, "
                         f"a directory of Parquet files or a glob")
    if callable(source):
        return IterableReader(source, repeatable=True)
    if hasattr(source, "__iter__"):
        return IterableReader(lambda: source, repeatable=iter(source) is not source)
    raise TypeError(f"source of type {type(source).__name__} is not a file path, an iterable "
                    f"of chunks or a callable returning one")


def csv_convert_options(columns=None, text_columns=()):
    """pyarrow's CSV conversion as fastml reads every CSV file (in memory, streamed, chunked
    prediction): an empty cell is missing in any column ("NA" or "null" stay text, as in the
    reader without pyarrow), and text_columns stay text."""
    import pyarrow as pa
    import pyarrow.csv as pc
    return pc.ConvertOptions(include_columns=list(columns or []), null_values=[""],
                             strings_can_be_null=True, quoted_strings_can_be_null=True,
                             column_types={name: pa.string() for name in text_columns})


def default_rows(n_columns):
    """Rows of a default chunk: about CHUNK_BYTES of float64 features."""
    return max(1024, CHUNK_BYTES // (8 * max(1, n_columns)))


class IterableReader:
    """A user's chunks: an iterable (one pass, unless it is a container) or a callable
    returning a fresh iterable (as many passes as asked)."""
    threads = columnar = False

    def __init__(self, make, repeatable):
        self.make, self.repeatable = make, repeatable

    def total_rows(self):
        return None

    def column_names(self):
        return None

    def batches(self, columns, chunk_rows):
        return iter(self.make())


def pyarrow():
    """pyarrow with its csv, dataset and parquet modules, or a clear error."""
    purpose = "reading Parquet / CSV files chunk by chunk"
    for module in ("pyarrow.csv", "pyarrow.dataset", "pyarrow.parquet"):
        require(module, "pandas", purpose)
    return require("pyarrow", "pandas", purpose)


class ParquetReader:
    """Parquet files read one after the other, each by pyarrow's synchronous batch reader,
    which holds about one decoded page and one dictionary page per column whatever the row
    groups' size (a dataset scanner reads ahead as far as it likes)."""
    repeatable = threads = columnar = True
    BATCH_ROWS = 1 << 13     # rows pyarrow decodes at a time (regrouped into chunks)

    def __init__(self, path):
        pa = pyarrow()
        if glob.has_magic(path):
            files = sorted(glob.glob(path))
        elif os.path.isdir(path):   # its Parquet files (a directory may hold others)
            files = sorted(glob.glob(os.path.join(path, "**", "*"), recursive=True))
            files = [f for f in files if f.lower().endswith(PARQUET_SUFFIXES)] or path
        else:
            files = path
        if isinstance(files, list) and not files:
            raise FileNotFoundError(f"no file matches {path!r}")
        if isinstance(files, str) and not os.path.exists(files):
            raise FileNotFoundError(f"no Parquet file or directory {path!r}")
        dataset = pa.dataset.dataset(files, format="parquet")
        self.files, self.schema = list(dataset.files), dataset.schema
        self._rows = dataset.count_rows()

    def total_rows(self):
        return self._rows

    def column_names(self):
        return list(self.schema.names)

    def batches(self, columns, chunk_rows):
        rows = chunk_rows or default_rows(len(self.schema.names))
        return rebatch(self._batches(columns, min(rows, self.BATCH_ROWS)), rows)

    def _batches(self, columns, rows):
        pa = pyarrow()
        for path in self.files:
            # pre_buffer=False: by default pyarrow buffers ahead without bound (the whole file)
            with pa.parquet.ParquetFile(path, pre_buffer=False, buffer_size=1 << 16) as file:
                if file.schema_arrow.names != self.schema.names:
                    raise ValueError(f"{path} has columns {file.schema_arrow.names}; the "
                                     f"first file has {self.schema.names}")
                yield from file.iter_batches(batch_size=rows, columns=columns,
                                             use_threads=False)
            pa.default_memory_pool().release_unused()   # the pages: see CSVReader._tables


class CSVReader:
    """A CSV file read block by block: `block_bytes` of text at a time, cut at the last line
    end, each parsed on its own (pyarrow's threads), so the reader holds one block whatever
    the file's size (pyarrow's streaming reader reads the whole file ahead). Column types
    are inferred from the first block; with `labels` given (fit_stream: the target) the
    integer columns other than those are read as float64, so a feature column whose first
    block holds only integers may hold a decimal later (its values become floats in the
    chunks' arrays anyway; a label column keeps its type, as the classes are its values).
    Rows end at a line end, as pyarrow reads them by default (no line break inside a
    quoted value). A .gz / .bz2 file is decompressed as it is read."""
    repeatable = threads = True
    columnar = False

    def __init__(self, path, text_columns=(), labels=None, block_bytes=BLOCK_BYTES):
        pyarrow()
        self.path, self.block_bytes = path, block_bytes
        self.text_columns = tuple(text_columns)
        self.labels = None if labels is None else tuple(labels)

    def total_rows(self):
        return None

    def column_names(self):
        with self._blocks() as blocks:
            return self._header(next(blocks, b""))

    def batches(self, columns, chunk_rows):
        return rebatch(self._tables(columns), chunk_rows, default_rows)

    def _tables(self, columns):
        """The parsed blocks: the first with the header (types inferred), the others with
        the first's names and types; a cell that does not parse as its column's type
        becomes an error naming the column and the block."""
        pa = pyarrow()
        with self._blocks() as blocks:
            block = next(blocks, b"")
            first = self._first_table(block, columns)
            read = pa.csv.ReadOptions(column_names=self._header(block))
            del block       # a view of the reader's buffer, which the next block reuses
            pa.default_memory_pool().release_unused()
            convert = csv_convert_options(columns, self.text_columns)
            convert.column_types = {field.name: field.type for field in first.schema}
            yield first
            row, k = first.num_rows, 1
            for block in blocks:
                try:
                    table = pa.csv.read_csv(pa.py_buffer(block), read_options=read,
                                            convert_options=convert)
                except pa.ArrowInvalid as error:
                    raise ValueError(_csv_type_error(str(error), first.schema, k, row,
                                                     self.path)) from None
                finally:
                    del block
                # the parser's scratch (about 3 blocks) goes back to the system: kept by
                # Arrow's allocator, it made resident memory grow with the file
                pa.default_memory_pool().release_unused()
                row, k = row + table.num_rows, k + 1
                yield table

    def _header(self, block):
        """The column names, from the header line of the first block."""
        pa = pyarrow()
        try:
            header = bytes(block[:256 << 10])    # the header line is in there
            return pa.csv.read_csv(pa.py_buffer(header[:header.find(b"\n") + 1] or header)
                                   ).schema.names
        except pa.ArrowInvalid as error:
            raise ValueError(f"cannot read {self.path}: {error}") from None

    def _first_table(self, block, columns):
        """The first block parsed with the header (its types inferred, integer features
        as float64)."""
        pa = pyarrow()
        options = csv_convert_options(columns, self.text_columns)
        try:
            table = pa.csv.read_csv(pa.py_buffer(block), convert_options=options)
            floats = {} if self.labels is None else {
                f.name: pa.float64() for f in table.schema
                if pa.types.is_integer(f.type) and f.name not in self.labels}
            if floats:
                options.column_types = {**options.column_types, **floats}
                table = pa.csv.read_csv(pa.py_buffer(block), convert_options=options)
        except pa.ArrowInvalid as error:    # the first block: name the file
            message = str(error)
            raise ValueError(_csv_ragged_error(message, self.path, "the first block") or
                             f"cannot read {self.path}: {message}") from None
        return table

    def _blocks(self):
        return _LineBlocks(self.path, self.block_bytes)


class _LineBlocks:
    """The bytes of a (possibly compressed) text file in blocks of about `size` bytes, each
    ending at a line end (the last at the end of the file); the first starts with the
    header. Every block is a view of one buffer, read into in place and reused for the next
    (a fresh 16 MB bytes object per block was 130 MB of resident memory: the allocator kept
    the freed blocks), so a block must be parsed before the next is asked for. A context
    manager that closes the file."""

    def __init__(self, path, size):
        self.path, self.size = path, size

    def __enter__(self):
        lowered = self.path.lower()
        if lowered.endswith(".gz"):
            import gzip
            self.file = gzip.open(self.path, "rb")
        elif lowered.endswith(".bz2"):
            import bz2
            self.file = bz2.open(self.path, "rb")
        else:
            self.file = open(self.path, "rb", buffering=0)
        return self._blocks()

    def __exit__(self, *exc_info):
        self.file.close()

    def _blocks(self):
        buffer, filled = bytearray(self.size), 0
        while True:
            if filled == len(buffer):       # a line longer than the buffer: widen it
                buffer.extend(bytes(len(buffer)))
            with memoryview(buffer) as view:
                read = self.file.readinto(view[filled:])
            if not read:
                break
            filled += read
            end = buffer.rfind(b"\n", 0, filled) + 1
            if end:
                with memoryview(buffer) as view:
                    yield view[:end]
                buffer[:filled - end] = buffer[end:filled]     # the rest of the last line
                filled -= end
        if buffer[:filled].strip():
            yield memoryview(buffer)[:filled]


def _csv_type_error(message, schema, k, row, path):
    ragged = _csv_ragged_error(message, path, f"block {k} (rows from {row})")
    if ragged:
        return ragged
    names = schema.names
    found = re.search(r"column #(\d+)", message)
    column = names[int(found.group(1))] if found and int(found.group(1)) < len(names) else "?"
    kind = schema.field(column).type if column in names else "?"
    return (f"{path}: column {column!r} changes type in block {k} (rows from {row}): it was "
            f"read as {kind} from the first block, and this block holds a value that is not "
            f"({message})")


def _csv_ragged_error(message, path, where):
    """The error for a row with more or fewer fields than the header (pyarrow's "Expected 3
    columns, got 4"), else None: it is no column's type changing."""
    found = re.search(r"Expected (\d+) columns, got (\d+)", message)
    if not found:
        return None
    expected, got = found.groups()
    return (f"{path}: a row in {where} has {got} fields where the header has {expected} "
            f"(a ragged row; every row needs one field per column) ({message})")


def read_ahead(items):
    """The items of `items`, each made by a background thread while the caller uses the one
    before: Arrow's readers and fastml's array copies release the GIL, so on two cores reading
    the file overlaps fitting. The thread starts on item k + 2 only once the caller has taken
    item k + 1, so at most two items are alive at a time (the one the caller uses and the
    next), whatever the file's size. For readers that allow threads only (a user's iterable
    may not be safe to drive from another thread). An error in the thread is raised in the
    caller; a caller that stops early stops the thread."""
    ready = queue.Queue()
    taken = threading.Semaphore(0)     # released each time the caller takes an item
    stop = threading.Event()
    end = object()

    def read():
        try:
            for item in items:
                ready.put((item, None))
                while not taken.acquire(timeout=0.05):
                    if stop.is_set():
                        return
            ready.put((end, None))
        except BaseException as error:  # handed to the caller, raised there
            ready.put((end, error))

    thread = threading.Thread(target=read, name="fastml-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, error = ready.get()
            taken.release()
            if error is not None:
                raise error
            if item is end:
                return
            yield item
    finally:
        stop.set()
        thread.join()


def rebatch(batches, rows, default=None):
    """Arrow batches regrouped into tables of exactly `rows` rows (the last may be shorter;
    rows None: default(number of columns) once the first batch says it): small batches are
    joined, large ones sliced. While the caller holds a table, this holds none of its batches.
    A table does not span two column types: at a batch whose schema differs (a later Parquet
    file with an int64 column as double), the rows so far are a shorter table (Arrow refused
    to join them: "Schema at index 1 was different")."""
    pending, count = [], 0
    for batch in batches:
        if rows is None:
            rows = default(batch.num_columns)
        if pending and not batch.schema.equals(pending[0].schema, check_metadata=False):
            count = 0
            yield _joined(pending)
        offset, size = 0, batch.num_rows
        while offset < size:
            take = min(rows - count, size - offset)
            pending.append(batch.slice(offset, take))
            count += take
            offset += take
            if offset == size:
                batch = None
            if count == rows:
                count = 0
                yield _joined(pending)
    if count:
        yield _joined(pending)


def _joined(pending):
    """One table of the batches in `pending`, which is emptied (a generator that yields the
    table holds no reference to it or to them)."""
    import pyarrow as pa
    table = pa.Table.from_batches(pending) if isinstance(pending[0], pa.RecordBatch) else \
        pa.concat_tables(pending)
    pending.clear()
    return table


# ------------------------------------------------------- Arrow tables as the parts' arrays
def column_values(frame, name, dtype=None):
    """One column of an Arrow table or a DataFrame as a numpy array (Arrow nulls: None in
    object columns, NaN in numeric ones, as to_pandas gives them); a DataFrame's column stays a
    Series unless a dtype is asked for."""
    if not hasattr(frame, "column_names"):
        return frame[name] if dtype is None else frame[name].to_numpy(dtype=dtype)
    values = frame.column(name).to_numpy(zero_copy_only=False)
    return values if dtype is None else values.astype(dtype, copy=False)


def numeric_matrix(table, features, order, buffers=None):
    """The feature columns of an all-numeric Arrow table as one float array in `order` ("C":
    rows, for the kernels that walk rows; "F": column-major), copied once from Arrow's column
    buffers, record batch by record batch (to_pandas would copy into a column-major block,
    and the estimator again to rows; concatenating a column's pieces would copy once more).
    None when a column is not an integer or a float (strings, bools, dates, ...): those go
    through to_pandas and fit's column rules. The array comes from
    `buffers.empty(shape, dtype, order)` when given (fastml.stream's reused buffers)."""
    import pyarrow as pa
    from ._core._layout import fill_from_columns
    types = [table.schema.field(name).type for name in features]
    # bool columns are categorical by fit's rules (fastml._tabular): they take the other path
    if not features or not all(pa.types.is_floating(t) or pa.types.is_integer(t) for t in types):
        return None
    dtype = np.float32 if all(t == pa.float32() for t in types) else np.float64
    shape = (table.num_rows, len(features))
    out = np.empty(shape, dtype, order=order) if buffers is None else \
        buffers.empty(shape, dtype, order)
    start = 0
    for batch in table.select(features).to_batches():
        if batch.num_rows:
            # Arrow nulls become NaN (to_numpy's rule, as to_pandas makes them)
            fill_from_columns([column.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
                               for column in batch.columns], out, start)
            start += batch.num_rows
    return out
