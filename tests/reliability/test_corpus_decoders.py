"""Every malformed-input kind of the corpus, at decoder level: the decoder never raises, reports the specific
error kind at the exact offset/line, and still returns the good records before (and, where framing allows,
after) the bad spot. Odd-but-valid inputs (empty segment, zero tail, sparse 10 GiB segment) read cleanly."""
from __future__ import annotations

import io
import os
import tracemalloc

import pytest

from udfs import compression, metadata_log, record_batch
from udfs.errors import KINDS

from .corpus import BY_NAME, CASES, SPARSE_SIZE
from .corpus_builders import BOMB_BYTES, GOOD_RECORDS, good_prefix
from .readers import READERS


def test_corpus_covers_at_least_30_distinct_kinds_of_bad_input():
    bad = [c for c in CASES if c.kind is not None]
    assert len(bad) >= 30
    assert {c.kind for c in bad} <= KINDS
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.reader for c in CASES} <= set(READERS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_decoder_reports_the_specific_error_and_keeps_the_good_records(case):
    built = case.build()
    outcome = READERS[case.reader](built.data)  # never raises: an exception here fails the test
    first = outcome.first
    assert (first.kind if first else None) == case.kind, first
    if first is not None:
        assert first.message  # a specific reason, not an empty string
        if built.offset is not None:
            assert first.offset == built.offset, first
        if built.line is not None:
            assert first.line == built.line, first
    assert (outcome.good_before, outcome.good_after) == (case.good_before, case.good_after)


SEGMENT_CASES = [c for c in CASES if c.reader in ("metadata_log", "segment_headers")]


@pytest.mark.parametrize("case", SEGMENT_CASES, ids=lambda c: c.name)
def test_segment_read_from_a_file_equals_read_from_bytes_and_accounts_for_every_byte(case, tmp_path):
    """The file path branch (pread) gives the same outcome; valid + zero tail + rest == file size, exactly."""
    path = case.write(tmp_path / "00000000000000000000.log")
    from_bytes = READERS[case.reader](path.read_bytes() if case.sparse_size is None else case.build().data)
    from_file = READERS[case.reader](str(path))
    if case.sparse_size is None:
        assert from_file == from_bytes
    end = record_batch.SegmentEnd()
    items = list(record_batch.scan_headers(str(path), end_info=end))
    assert end.file_size == os.path.getsize(path)
    assert end.valid_bytes + end.zero_tail_bytes + end.remaining_bytes == end.file_size
    framing_error = [i for i in items if isinstance(i, record_batch.DecodeError)]
    if framing_error:
        assert end.error == framing_error[0] and end.valid_bytes == framing_error[0].offset
        assert end.remaining_bytes > 0
    else:
        assert end.error is None and end.remaining_bytes == 0


class CountingReader(io.RawIOBase):
    """A file object without ``fileno``: the decoder must seek and read through it, so every byte is counted."""

    def __init__(self, path):
        self._f = open(path, "rb")
        self.bytes_read = 0
        self.reads = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        return self._f.seek(pos, whence)

    def tell(self):
        return self._f.tell()

    def read(self, n=-1):
        data = self._f.read(n)
        self.bytes_read += len(data)
        self.reads += 1
        return data

    def fileno(self):
        raise OSError("no descriptor")

    def close(self):
        self._f.close()
        super().close()


def test_header_scan_of_a_10_gib_sparse_segment_reads_a_few_kib(tmp_path):
    case = BY_NAME["data_segment_sparse_10gib"]
    path = case.write(tmp_path / "00000000000000000000.log")
    assert os.path.getsize(path) == SPARSE_SIZE
    assert os.stat(path).st_blocks * 512 < (1 << 20)  # really sparse on this filesystem

    counting = CountingReader(path)
    end = record_batch.SegmentEnd()
    headers = list(record_batch.scan_headers(counting, end_info=end))
    assert [type(h) for h in headers] == [record_batch.BatchHeader]
    assert (end.valid_bytes, end.zero_tail_bytes, end.error) == (len(case.build().data), SPARSE_SIZE -
                                                                 len(case.build().data), None)
    assert counting.bytes_read <= 128 * 1024  # one header + one zero-tail probe, not 10 GiB


def test_header_scan_by_descriptor_skips_holes_without_reading_them(tmp_path, monkeypatch):
    path = BY_NAME["data_segment_sparse_10gib"].write(tmp_path / "00000000000000000000.log")
    read = []
    real_pread = os.pread

    def counting_pread(fd, n, offset):
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting_pread)
    end = record_batch.SegmentEnd()
    assert len(list(record_batch.scan_headers(str(path), end_info=end))) == 1
    assert sum(read) <= 128 * 1024 and end.zero_tail_bytes == SPARSE_SIZE - end.valid_bytes


@pytest.mark.parametrize("codec", [compression.GZIP, compression.ZSTD, compression.LZ4, compression.SNAPPY],
                         ids=lambda c: compression.NAMES[c])
def test_decompression_bomb_stops_at_the_limit_without_allocating_the_bomb(codec):
    """A 128 MiB bomb read with a 1 MiB limit: decompression_bomb, and the peak stays a few MiB."""
    data = BY_NAME[f"bomb_{compression.NAMES[codec]}"].build().data
    batches = [b for b in record_batch.read_batches(data) if isinstance(b, record_batch.Batch)]
    bomb_batch = batches[2]
    assert bomb_batch.header.compression == codec and bomb_batch.header.crc_valid
    limit = 1 << 20
    tracemalloc.start()
    try:
        got = list(record_batch.iter_records(bomb_batch, max_decompressed_bytes=limit))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [type(g).__name__ for g in got] == ["DecodeError"] and got[0].kind == "decompression_bomb"
    assert got[0].offset == bomb_batch.header.position
    assert peak < 16 * limit <= BOMB_BYTES // 8


@pytest.mark.parametrize("name", ["bomb_gzip", "bomb_zstd", "bomb_lz4"])
def test_metadata_reader_bounds_a_bomb_by_its_default_limit(name):
    """Through the metadata reader (default 64 MiB limit) the peak is bounded by the limit, not the bomb."""
    data = BY_NAME[name].build().data
    tracemalloc.start()
    try:
        records = list(metadata_log.iter_metadata_records(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.error.kind for r in records if r.error] == ["decompression_bomb"]
    assert sum(1 for r in records if r.error is None) == GOOD_RECORDS + 1
    assert peak <= 2 * compression.DEFAULT_MAX_BYTES + (16 << 20)


def test_zero_filled_tail_is_counted_as_tail_not_as_data():
    data = BY_NAME["segment_zero_filled_tail"].build().data
    end = record_batch.SegmentEnd()
    records = list(metadata_log.iter_metadata_records(data, end_info=end))
    assert len(records) == GOOD_RECORDS and all(r.error is None for r in records)
    assert (end.valid_bytes, end.zero_tail_bytes, end.error) == (len(good_prefix()), 256 * 1024, None)


def test_crc_mismatch_batch_is_reported_once_and_its_records_are_not_trusted():
    data = BY_NAME["segment_crc_mismatch"].build().data
    records = list(metadata_log.iter_metadata_records(data))
    bad = [r for r in records if r.error]
    assert len(bad) == 1 and bad[0].type is None and bad[0].batch_base_offset == 3
    assert [r.offset for r in records if r.error is None] == [0, 1, 2, 10]
    trusted = list(metadata_log.iter_metadata_records(data, trust_bad_crc=True))
    assert all(r.error is None for r in trusted) and len(trusted) == GOOD_RECORDS + 2


def test_bad_frame_keeps_its_raw_value_for_the_quarantine_row():
    records = list(metadata_log.iter_metadata_records(BY_NAME["frame_unknown_api_key"].build().data))
    [bad] = [r for r in records if r.error]
    assert bad.raw_value is not None and bad.offset == 5 and "Unknown metadata id 200" in bad.error.message
