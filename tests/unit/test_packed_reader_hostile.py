"""Hostile packed snapshots: the reader rejects unsafe members with a reason, caps every size, never raises.

Packs are crafted line by line here (what an attacker or a broken disk could hand us); a real pack of the
devsample tree is used for truncation and corruption.
"""
from __future__ import annotations

import base64
import builtins
import gzip
import io
import json
import os
import shutil
import stat
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector import write_pack
from udfs import errors
from udfs.pack_reader import PACK_ERROR_KINDS, PackReader, read_pack

LOG_DIR = "/var/lib/kafka/data"


def header(**changes) -> dict:
    base = {"rec": "header", "format": "kafka-recon-pack", "version": 1, "collector_version": "1.0.0",
            "broker_id": 101, "cluster_id": "EKJ41Lv86vWjqGSh58Dg2w", "host": "b1",
            "capture_time": "2026-11-22T08:32:56.000Z", "log_dirs": [LOG_DIR], "options": {}, "warnings": []}
    base.update(changes)
    return base


def entry(path: str, kind: str = "file", content: bytes | None = None, **fields) -> dict:
    rec = {"rec": "entry", "log_dir": LOG_DIR, "path": path, "kind": kind, "size": 0, "mtime_ms": 1}
    if content is not None:
        rec.update(size=len(content), content_size=len(content), content_b64=base64.b64encode(content).decode())
    rec.update(fields)
    return rec


GOOD = entry("events-0/partition.metadata", content=b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg")
GOOD_DIR = entry("events-0", "dir", size=4096)


def lines(*records, trailer: bool | dict = True) -> bytes:
    """JSON lines for the records, plus a trailer counting them unless told otherwise."""
    out = [json.dumps(r) if isinstance(r, dict) else r for r in records]
    if trailer is True:
        entries = sum(1 for r in records if isinstance(r, dict) and r.get("rec") == "entry")
        parts = sum(1 for r in records if isinstance(r, dict) and r.get("rec") == "part")
        out.append(json.dumps({"rec": "trailer", "entries": entries, "parts": parts}))
    elif isinstance(trailer, dict):
        out.append(json.dumps(trailer))
    return "".join(line + "\n" for line in out).encode()


def pack(*records, trailer: bool | dict = True, head: dict | None = None) -> bytes:
    """A gzip pack: a header (``head`` or a good one), the records, a trailer."""
    return gzip.compress(lines(head or header(), trailer=False) + lines(*records, trailer=trailer))


def read(data, **limits) -> tuple[PackReader, list[dict]]:
    reader = read_pack(data, **limits)
    got = list(reader)
    assert all(e.kind in PACK_ERROR_KINDS for e in reader.errors)
    assert reader.complete == (reader.trailer is not None and not reader.errors)
    return reader, got


def kinds(reader) -> list[str]:
    return [e.kind for e in reader.errors]


@pytest.fixture(scope="module")
def real_pack(devsample_dir, tmp_path_factory) -> tuple[bytes, list[dict]]:
    """A real pack of broker 101 (and its entries as read back)."""
    dest = tmp_path_factory.mktemp("b101") / "broker-101"
    shutil.copytree(devsample_dir / "broker-101", dest)
    buf = io.BytesIO()
    write_pack(buf, [str(dest / "kafka-logs")], host="h", capture_time="2026-11-22T08:32:56.000Z")
    reader, got = read(buf.getvalue())
    assert reader.complete and len(got) > 50
    return buf.getvalue(), got


def test_reader_error_kinds_are_registered_decode_error_kinds():
    assert PACK_ERROR_KINDS <= errors.KINDS
    errors.DecodeError("unsafe_path", "absolute path", line=3)  # constructible for the quarantine table


def test_well_formed_pack_reads_complete():
    reader, got = read(pack(GOOD, GOOD_DIR, entry("", "dir")))
    assert reader.complete and reader.errors == []
    assert [e["path"] for e in got] == ["events-0/partition.metadata", "events-0", ""]
    assert got[0]["content"] == b"version: 0\ntopic_id: xWt6cg-LDx4r6BAz2rYsCg"
    assert reader.header["broker_id"] == 101 and reader.trailer["entries"] == 3


# ------------------------------------------------------------------------------------- unsafe paths


@pytest.mark.parametrize(
    "path, reason",
    [
        ("../../etc/passwd", "more than 2 components"),
        ("../passwd", "'..' component"),
        ("events-0/../../../etc/shadow", "more than 2 components"),
        ("..", "'..' component"),
        ("events-0/..", "'..' component"),
        ("/etc/passwd", "absolute path"),
        ("//host/share", "absolute path"),
        ("events-0/partition.metadata\x00.txt", "NUL byte"),
        ("./meta.properties", "'.' or"),
        ("events-0/", "empty,"),
        ("/", "absolute path"),
        ("a/b/c", "more than 2 components"),
    ],
)
def test_unsafe_member_paths_are_rejected_with_a_reason(path, reason):
    reader, got = read(pack(GOOD, entry(path, content=b"owned"), GOOD_DIR))
    assert [e["path"] for e in got] == ["events-0/partition.metadata", "events-0"]
    [err] = reader.errors
    assert err.kind == "unsafe_path" and reason in err.message
    assert err.path == path and err.line == 3
    assert not reader.complete


def test_member_of_a_log_dir_not_in_the_header_is_rejected():
    reader, got = read(pack(entry("meta.properties", log_dir="/etc"), entry("x", log_dir=["not", "a", "str"])))
    assert got == [] and kinds(reader) == ["unsafe_path", "unsafe_path"]


def test_reader_never_creates_anything_on_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    violations = []

    def forbid(name):
        def refuse(*args, **kwargs):
            violations.append((name, args))
            raise PermissionError(13, "reader must not touch the filesystem")

        return refuse

    for name in ("symlink", "link", "mkdir", "makedirs", "mknod", "mkfifo", "rename", "replace", "chmod"):
        monkeypatch.setattr(os, name, forbid(name))
    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if set(mode) & set("wax+"):
            violations.append(("open", file, mode))
            raise PermissionError(13, "reader must not write")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    data = pack(
        entry("evil-0", "symlink", target="/etc"),
        entry("sda", "other", mode=stat.S_IFBLK | 0o660),
        entry("../escape", content=b"x"),
        entry("/abs", content=b"x"),
    )
    reader, got = read(data)
    monkeypatch.undo()
    assert violations == [] and os.listdir(tmp_path) == []
    assert [e["path"] for e in got] == ["evil-0", "sda"]


# ------------------------------------------------------------------------- symlink and device members


def test_symlink_member_is_data_only_and_cannot_carry_content():
    outside = entry("evil-0", "symlink", target="/etc/kafka/../../root/.ssh")
    with_content = entry("partition.metadata", "symlink", target="/etc/passwd")
    with_content.update(content_size=4, content_b64=base64.b64encode(b"root").decode())
    reader, got = read(pack(outside, with_content))
    assert [(e["path"], e["kind"], e["target"], e["content"]) for e in got] == [
        ("evil-0", "symlink", "/etc/kafka/../../root/.ssh", None)
    ]
    [err] = reader.errors
    assert (err.kind, err.path) == ("unsafe_member", "partition.metadata") and "symlink" in err.message


def test_device_and_fifo_members_are_listed_without_content():
    device = entry("sda", "other", mode=stat.S_IFBLK | 0o660)
    fifo_with_content = entry("events-0/pipe", "other", content=b"data", mode=stat.S_IFIFO | 0o644)
    dir_with_content = entry("events-0", "dir", content=b"data")
    root_as_file = entry("", "file")
    reader, got = read(pack(device, fifo_with_content, dir_with_content, root_as_file))
    assert [(e["path"], e["kind"], stat.S_ISBLK(e["mode"]), e["content"]) for e in got] == [
        ("sda", "other", True, None)
    ]
    assert kinds(reader) == ["unsafe_member"] * 3


def test_target_only_on_symlinks():
    reader, got = read(pack(entry("x", "file", target="/etc/passwd"), entry("y", "symlink", target="a\x00b")))
    assert got == [] and kinds(reader) == ["bad_entry", "bad_entry"]


# ------------------------------------------------------------------------------------------- bombs


def _gzip_member(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def test_decompression_bomb_line_stops_at_the_cap_without_allocating_it():
    """1 GiB of 'a' with no newline (a ~1 MB file): the reader must stop near max_line_bytes."""
    bomb_member = _gzip_member(b"a" * (1 << 20))
    data = _gzip_member(lines(header(), trailer=False)) + bomb_member * 1024
    assert len(data) < 2 << 20
    tracemalloc.start()
    try:
        reader, got = read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == [] and reader.header is not None
    assert kinds(reader) == ["decompression_bomb"] and "max_line_bytes" in reader.errors[0].message
    assert peak < 24 << 20


def test_bomb_in_the_header_line():
    data = gzip.compress(b"{" + b" " * (8 << 20))
    reader, got = read(data)
    assert reader.header is None and got == [] and kinds(reader) == ["decompression_bomb"]


def test_flood_of_small_lines_stops_at_max_total_bytes():
    flood = _gzip_member(lines(entry("", "dir"), trailer=False) * 1000)
    data = _gzip_member(lines(header(), trailer=False)) + flood * 200
    reader, got = read(data, max_total_bytes=2 << 20)
    assert kinds(reader) == ["decompression_bomb"] and "max_total_bytes" in reader.errors[0].message
    assert 0 < len(got) < 200_000


def test_declared_content_size_over_the_cap_is_refused_before_decoding():
    huge = entry("events-0/partition.metadata", content=b"x", content_size=10 << 30, content_parts=10241)
    reader, got = read(pack(huge, GOOD), max_content_bytes=1 << 20)
    assert [e["path"] for e in got] == [GOOD["path"]]
    assert kinds(reader)[0] == "decompression_bomb" and reader.errors[0].path == huge["path"]


def test_content_over_max_content_bytes_is_rejected():
    big = entry("events-0/00000000000000000000.snapshot", content=b"\0" * 4096)
    reader, got = read(pack(big, GOOD), max_content_bytes=1000)
    assert [e["path"] for e in got] == [GOOD["path"]] and kinds(reader) == ["decompression_bomb"]


def test_parts_of_a_rejected_entry_are_skipped_not_held():
    first = base64.b64encode(b"a" * 10).decode()
    rejected = entry("/abs", content=b"a" * 10, content_size=30, content_parts=3)
    part = {"rec": "part", "content_b64": first}
    reader, got = read(pack(rejected, part, part, GOOD))
    assert [e["path"] for e in got] == [GOOD["path"]] and kinds(reader) == ["unsafe_path"]


def test_parts_holding_more_than_content_size_are_rejected():
    start = entry("__cluster_metadata-0/00000000000000000000.log", content=b"a" * 10)
    start.update(content_size=20, content_parts=2)
    too_much = {"rec": "part", "content_b64": base64.b64encode(b"b" * 4000).decode()}
    reader, got = read(pack(start, too_much, GOOD))
    assert [e["path"] for e in got] == [GOOD["path"]] and kinds(reader) == ["bad_entry"]


def test_multi_part_content_reassembles():
    start = entry("__cluster_metadata-0/00000000000000000000.log", content=b"a" * 3)
    start.update(size=9, content_size=9, content_parts=3)
    parts = [{"rec": "part", "content_b64": base64.b64encode(c * 3).decode()} for c in (b"b", b"c")]
    reader, got = read(pack(start, *parts))
    assert reader.complete and got[0]["content"] == b"aaabbbccc"


def test_missing_and_orphan_parts():
    start = entry("__cluster_metadata-0/00000000000000000000.log", content=b"a" * 3)
    start.update(content_size=6, content_parts=2)
    orphan = {"rec": "part", "content_b64": "YQ=="}
    reader, got = read(pack(start, GOOD, orphan))
    assert [e["path"] for e in got] == [GOOD["path"]]
    assert kinds(reader) == ["bad_entry", "bad_entry"]
    assert "parts missing" in reader.errors[0].message and "without an entry" in reader.errors[1].message


def test_pack_ending_inside_content_parts_is_truncated():
    start = entry("__cluster_metadata-0/00000000000000000000.log", content=b"a" * 3)
    start.update(content_size=6, content_parts=2)
    reader, got = read(pack(start, trailer=False))
    assert got == [] and kinds(reader) == ["truncated_pack", "truncated_pack"]


# ----------------------------------------------------------------------------------- truncation


def test_truncated_gzip_yields_the_entries_read_so_far(real_pack):
    data, full = real_pack
    reader, got = read(data[: len(data) * 6 // 10])
    assert 0 < len(got) < len(full) and got == full[: len(got)]
    assert kinds(reader) == ["truncated_pack"] and reader.trailer is None


def test_missing_trailer_is_truncation():
    reader, got = read(pack(GOOD, GOOD_DIR, trailer=False))
    assert len(got) == 2 and kinds(reader) == ["truncated_pack"] and "no trailer" in reader.errors[0].message


def test_unterminated_last_line_is_truncation():
    data = gzip.compress(lines(header(), GOOD)[:-1])
    reader, got = read(data)
    assert kinds(reader) == ["truncated_pack"]


def test_trailer_counts_must_match():
    reader, got = read(pack(GOOD, GOOD_DIR, trailer={"rec": "trailer", "entries": 5, "parts": 0}))
    assert len(got) == 2 and kinds(reader) == ["count_mismatch"]
    reader, _ = read(pack(GOOD, trailer={"rec": "trailer"}))
    assert kinds(reader) == ["count_mismatch"]


def test_corrupt_crc_and_garbage_after_the_stream(real_pack):
    data, full = real_pack
    bad_crc = bytearray(data)
    bad_crc[-8] ^= 0xFF
    reader, got = read(bytes(bad_crc))
    assert got == full and kinds(reader) == ["corrupt_pack"]
    reader, got = read(data + b"garbage!")
    assert got == full and kinds(reader) == ["corrupt_pack"]


def test_records_after_the_trailer():
    data = gzip.compress(lines(header(), trailer=False) + lines(GOOD) + lines(GOOD, trailer=False))
    reader, got = read(data)
    assert len(got) == 1 and kinds(reader) == ["garbage_after_frame"]


# ----------------------------------------------------------------------------------------- headers


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"", "bad_header"),
        (b"\x00\x01\x02garbage\xff\xfe not a pack at all", "bad_header"),
        (gzip.compress(b"hello\n", mtime=0), "bad_header"),
        (gzip.compress(b"\x1f\x8b" + b"\x00" * 20, mtime=0), "bad_header"),
        (b"\x1f\x8b\x08\x00garbage-after-magic", "corrupt_pack"),
        (b"\x1f\x8b", "truncated_pack"),
        (pack(GOOD, head=header(format="tar")), "bad_header"),
        (pack(GOOD, head=header(rec="entry")), "bad_header"),
        (pack(GOOD, head=header(version=2)), "bad_version"),
        (pack(GOOD, head=header(version="1")), "bad_header"),
        (pack(GOOD, head=header(version=True)), "bad_header"),
        (pack(GOOD, head=header(log_dirs=[])), "bad_header"),
        (pack(GOOD, head=header(log_dirs=[LOG_DIR, LOG_DIR])), "bad_header"),
        (pack(GOOD, head=header(log_dirs=[LOG_DIR, 7])), "bad_header"),
        (pack(GOOD, head=header(broker_id="101")), "bad_header"),
        (pack(GOOD, head=header(warnings="none")), "bad_header"),
        (gzip.compress(json.dumps(header()).encode()), "truncated_pack"),
        (gzip.compress(b"[" * 200_000 + b"\n"), "bad_header"),
    ],
)
def test_garbage_headers(data, kind):
    reader, got = read(data)
    assert reader.header is None and got == [] and kinds(reader) == [kind] and not reader.complete


def test_missing_pack_file_and_failing_source(tmp_path):
    reader, got = read(str(tmp_path / "nope.jsonl.gz"))
    assert got == [] and kinds(reader) == ["io_error"]

    # big enough (random contents, ~500 KiB compressed) that gzip has not pulled it all in at the failure
    records = [entry("events-0/%020d.snapshot" % i, content=os.urandom(1000)) for i in range(400)]
    data = pack(*records)
    assert len(data) > 400_000

    class Failing(io.RawIOBase):
        def __init__(self):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def read(self, n=-1):
            if self.inner.tell() > len(data) // 2:
                raise OSError(5, "Input/output error")
            return self.inner.read(min(n, 4096) if n and n > 0 else 4096)

    reader, got = read(Failing())
    assert 0 < len(got) < len(records) and kinds(reader) == ["io_error"] and "EIO" in reader.errors[0].message
    assert [e["content"] for e in got] == [base64.b64decode(r["content_b64"]) for r in records[: len(got)]]


# -------------------------------------------------------------------------------------- bad entries


@pytest.mark.parametrize(
    "bad",
    [
        entry("x", size="43"),
        entry("x", size=True),
        entry("x", size=-1),
        entry("x", size=1.5),
        entry("x", alloc=10**30 * -1),
        entry("x", kind=["file"]),
        entry("x", kind="block"),
        entry(5),
        entry("x", flags="over_cap"),
        entry("x", flags=[1]),
        entry("x", error=["boom"]),
        entry("x", content=b"abc", content_b64="!!!not base64!!!"),
        entry("x", content=b"abc", content_size=2),
        entry("x", content=b"abc", content_size="3"),
        entry("x", content_size=3),
        {"rec": 7},
        {"no_rec": True},
    ],
)
def test_mistyped_entries_are_rejected_and_reading_goes_on(bad):
    reader, got = read(pack(bad, GOOD))
    assert [e["path"] for e in got] == [GOOD["path"]]
    assert kinds(reader) == ["bad_entry"]


def test_non_json_lines_and_deep_nesting():
    reader, got = read(pack("not json", "[1, 2]", "[" * 200_000, '"\xff"', GOOD))
    assert [e["path"] for e in got] == [GOOD["path"]]
    assert kinds(reader) == ["bad_json"] * 4


def test_unknown_record_types_and_keys_are_skipped_for_forward_compatibility():
    newer = dict(GOOD, checksum="abc", owner="kafka")
    reader, got = read(pack({"rec": "stats", "x": 1}, newer))
    assert reader.complete and got[0]["content"] == base64.b64decode(GOOD["content_b64"])
    assert "checksum" not in got[0]


def test_reader_stops_after_max_errors():
    bad = [entry("/abs")] * 50
    reader, got = read(pack(*bad, GOOD), max_errors=10)
    assert got == [] and kinds(reader) == ["unsafe_path"] * 10 + ["too_many_errors"]


def test_plain_uncompressed_pack_path_bytes_and_file_objects_agree(tmp_path):
    data = pack(GOOD, GOOD_DIR)
    (tmp_path / "p.jsonl.gz").write_bytes(data)
    (tmp_path / "p.jsonl").write_bytes(gzip.decompress(data))
    results = [read(src)[1] for src in (data, io.BytesIO(data), tmp_path / "p.jsonl.gz", str(tmp_path / "p.jsonl"))]
    assert all(r == results[0] for r in results) and len(results[0]) == 2


def test_reader_iterates_once():
    reader = read_pack(pack(GOOD))
    list(reader)
    with pytest.raises(ValueError):
        iter(reader)


# --------------------------------------------------------------------------------------------- fuzz


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6),
       truncate=st.integers(0, 10**6))
def test_fuzzed_compressed_bytes_never_raise(real_pack, cuts, truncate):
    data = bytearray(real_pack[0])
    for pos, value in cuts:
        data[pos % len(data)] = value
    reader, got = read(bytes(data[: max(1, truncate % (len(data) + 1))]))
    assert len(got) <= len(real_pack[1])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(list(b'{}[]":,/.\\0 \nax-'))),
                      min_size=1, max_size=8))
def test_fuzzed_json_text_never_raises(real_pack, edits):
    text = bytearray(zlib.decompress(real_pack[0], 31))
    for pos, value in edits:
        text[pos % len(text)] = value
    reader, got = read(gzip.compress(bytes(text), compresslevel=1))
    for e in got:  # whatever was accepted is still safe
        assert e["path"] == "" or (not e["path"].startswith("/") and ".." not in e["path"].split("/"))
        assert e["content"] is None or e["kind"] == "file"


_STDLIB_READ = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from udfs import gzip_members, pack_reader
assert pack_reader._B64_DECODE.__module__ == "base64" and pack_reader._JSON_DECODE.__module__ == "json.decoder"
assert gzip_members._isal_zlib is None  # gzip.GzipFile reads
reader = pack_reader.read_pack(open(sys.argv[2], "rb"))
entries = [[e.get("log_dir"), e.get("path"), e.get("kind"), e.get("flags"),
            None if e.get("content") is None else hashlib.sha256(e["content"]).hexdigest()] for e in reader]
print(json.dumps({"kinds": [x.kind for x in reader.errors], "entries": entries}))
"""


def _variants(data: bytes) -> dict:
    bad_crc = bytearray(data)
    bad_crc[-8] ^= 0xFF
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x55
    good_lines = lines(header(), GOOD, GOOD_DIR, trailer=False)
    bad_size = bytearray(data)
    bad_size[-2] ^= 0x01
    named = bytearray(gzip.compress(good_lines + b'{"rec":"trailer","entries":2,"parts":0}\n', mtime=0))
    named[3] |= 8 | 16  # FNAME and FCOMMENT flags, then the two strings after the 10-byte header
    named[10:10] = b"pack.jsonl\x00comment\x00"
    return {"real": data, "truncated": data[: len(data) * 6 // 10], "bad_crc": bytes(bad_crc),
            "bad_length": bytes(bad_size), "two_members_zero_padded": data + b"\x00" * 700 + data,
            "zero_padded_then_garbage": data + b"\x00\x00x", "one_stray_byte": data + b"\x1f",
            "header_only": data[:10], "named_member": bytes(named), "cut_in_trailer": data[:-3],
            "flipped_deflate_byte": bytes(flipped), "garbage_after": data + b"garbage!",
            "bad_base64": pack(entry("partition.metadata", content=b"x", content_b64="!!!")),
            "lone_surrogate_escape": pack({**GOOD, "path": "a\\ud800"}),
            "plain_lines": good_lines + b'{"rec":"trailer","entries":2,"parts":0}\n'}


def test_accelerated_reader_agrees_with_the_stdlib_reader(real_pack, tmp_path):
    """ISA-L inflate, SIMD base64 and orjson (executors) read every pack exactly as the stdlib-only collector
    would on a broker: same entries, same bytes, same error kinds, also for corrupt and cut-off packs."""
    import hashlib
    import subprocess
    import sys
    from pathlib import Path

    from udfs import gzip_members, pack_reader

    assert pack_reader._B64_DECODE.__module__.startswith("pybase64")  # the accelerators are installed (pyproject)
    assert gzip_members._isal_zlib is not None
    repo = str(Path(pack_reader.__file__).resolve().parents[1])
    for name, data in _variants(real_pack[0]).items():
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(data)
        reader, got = read(data)
        fast = {"kinds": kinds(reader), "entries": [
            [e.get("log_dir"), e.get("path"), e.get("kind"), e.get("flags"),
             None if e.get("content") is None else hashlib.sha256(e["content"]).hexdigest()] for e in got]}
        run = subprocess.run([sys.executable, "-I", "-S", "-c", _STDLIB_READ, repo, str(path)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == fast, name
