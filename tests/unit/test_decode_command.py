"""``kafka-recon decode``: JSON lines equal to Kafka's dump-log payloads; errors marked; no Spark imported."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from kafka_dump_lines import parse_dump, tool_output_for

from jobs import decode_command
from udfs import metadata_log
from udfs.errors import DecodeError
from udfs.metadata_record import MetadataRecord

DEVSAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-devsample"
META_DIR = DEVSAMPLE / "broker-101/kafka-logs/__cluster_metadata-0"
SEGMENT = META_DIR / "00000000000000000026.log"
SNAPSHOT = META_DIR / "00000000000000000044-0000000001.checkpoint"


def run(argv, capsys) -> tuple:
    status = decode_command.main(argv)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return status, lines


@pytest.mark.parametrize("path", [SEGMENT, SNAPSHOT, DEVSAMPLE / "broker-103/kafka-logs/bootstrap.checkpoint"],
                         ids=lambda p: p.name)
def test_output_equals_kafkas_dump_json(path, capsys):
    status, lines = run(["decode", str(path)], capsys)
    assert status == 0
    kafka = {}
    for batch in parse_dump(tool_output_for(DEVSAMPLE, path)).batches:
        for rec in batch.records:
            payload = rec.metadata_json
            if payload is not None:
                kafka[rec.offset] = (payload["type"], payload["version"], payload["data"])
            elif rec.control and rec.control[1] is not None:
                kafka[rec.offset] = (rec.control[0], 0, rec.control[1])
    ours = {o["offset"]: (o["type"], o["version"], o["data"]) for o in lines}
    assert {k: ours[k] for k in kafka} == kafka
    assert all(o.get("control") is True for o in lines if o["type"] in ("SNAPSHOT_HEADER", "LEADER_CHANGE"))
    assert all("error" not in o for o in lines)


def test_leading_decode_word_is_optional_and_several_files_are_named(capsys):
    status, plain = run([str(SNAPSHOT)], capsys)
    assert status == 0
    status, both = run([str(SNAPSHOT), str(SEGMENT)], capsys)
    assert status == 0
    assert [o["file"] for o in both[: len(plain)]] == [str(SNAPSHOT)] * len(plain)
    assert [{k: v for k, v in o.items() if k != "file"} for o in both[: len(plain)]] == plain
    assert both[-1]["file"] == str(SEGMENT)


def test_errors_are_marked_lines(tmp_path, capsys):
    broken = tmp_path / "00000000000000000000.log"
    data = SEGMENT.read_bytes()
    broken.write_bytes(data[:-10])
    unknown = tmp_path / "notes.bin"
    unknown.write_bytes(b"\x00\x01binary")
    status, lines = run([str(broken), str(unknown), str(tmp_path / "missing.log")], capsys)
    assert status == 1
    kinds = [o["error"]["kind"] for o in lines if "error" in o]
    assert kinds == ["truncated_batch", "unrecognised_file", "io_error"]
    assert [o["offset"] for o in lines if "error" not in o] == list(range(26, 59))


def test_a_truncated_segment_exits_non_zero_and_says_how_much_could_not_be_read(tmp_path):
    """A real metadata segment cut 10 bytes short (Kafka's own dump-log stops there with "Found 10 invalid
    bytes at the end"): the readable records are printed, and the exit status says the file was not read whole."""
    broken = tmp_path / "00000000000000000026.log"
    broken.write_bytes(SEGMENT.read_bytes()[:-10])
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "decode", str(broken)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len([o for o in lines if "error" in o]) == 1 and [o["offset"] for o in lines if "error" not in o]
    (message,) = proc.stderr.strip().splitlines()
    assert "1 record(s)" in message and "could not be read" in message
    whole = subprocess.run([sys.executable, "-m", "jobs.cli", "decode", str(SEGMENT)], capture_output=True,
                           text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert whole.returncode == 0 and whole.stderr == ""


def test_usage(capsys):
    assert decode_command.main([]) == 2
    assert decode_command.main(["decode"]) == 2
    assert "usage" in capsys.readouterr().err


def test_dump_log_text_goes_through_udfs_dump_log_text(tmp_path, capsys, monkeypatch):
    seen = []

    def fake_iter(lines):
        for number, line in enumerate(lines, 1):
            seen.append(line)
            if line.startswith("| offset: 5 "):
                yield MetadataRecord(offset=5, batch_base_offset=5, batch_last_offset=5, leader_epoch=1,
                                     timestamp=7, is_control=False, type="NO_OP_RECORD", api_key=20, version=0,
                                     data={})
            elif line.startswith("| offset: 6 "):
                yield MetadataRecord(offset=6, batch_base_offset=6, batch_last_offset=6, leader_epoch=1,
                                     timestamp=7, is_control=False, type=None, api_key=None, version=None,
                                     data=None, error=DecodeError("bad_json", "not JSON", line=number))

    monkeypatch.setitem(sys.modules, "udfs.dump_log_text", types.SimpleNamespace(iter_dump_log_records=fake_iter))
    text = tmp_path / "dump.txt"
    text.write_text("Dumping x.log\nLog starting offset: 5\n| offset: 5 CreateTime: 7 payload: {}\n"
                    "| offset: 6 CreateTime: 7 payload: {\n")
    status, lines = run([str(text)], capsys)
    assert status == 1 and len(seen) == 4  # one record could not be read: not a clean exit
    assert lines[0] == {"offset": 5, "type": "NO_OP_RECORD", "version": 0, "data": {}}
    assert lines[1]["error"] == {"kind": "bad_json", "message": "not JSON", "offset": None, "line": 4}


def test_real_dump_log_text_file_is_recognised():
    assert decode_command.file_kind(tool_output_for(DEVSAMPLE, SEGMENT)) == "text"
    assert decode_command.file_kind(SEGMENT) == "binary"


def test_command_does_not_import_pyspark():
    code = ("import sys, io, contextlib; from jobs import decode_command; "
            "buf = io.StringIO(); "
            "ctx = contextlib.redirect_stdout(buf); ctx.__enter__(); "
            f"decode_command.main(['decode', {str(SNAPSHOT)!r}]); ctx.__exit__(None, None, None); "
            "print('pyspark' in sys.modules, len(buf.getvalue().splitlines()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.split()
    assert out == ["False", "23"]


def test_module_entry_point_runs(capsys):
    proc = subprocess.run([sys.executable, "-m", "jobs.decode_command", "decode", str(SNAPSHOT)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0
    first = json.loads(io.StringIO(proc.stdout).readline())
    assert first == {"offset": 0, "type": "SNAPSHOT_HEADER", "version": 0, "control": True,
                     "data": {"version": 0, "lastContainedLogTimestamp": 1738368004200}}


def test_json_lines_are_compact_utf8_whichever_encoder_writes_them():
    """orjson writes the lines; what it refuses (an integer beyond 64 bits) falls back to the stdlib, and both
    give the same compact UTF-8 text as json.dumps(separators=(",", ":"), ensure_ascii=False)."""
    encode = decode_command._json_line_encoder()
    for obj in ({"offset": 7, "type": "TOPIC_RECORD", "data": {"name": "zählung-ü", "ids": [1, -2]}},
                {"offset": 2**70, "data": {"big": -(2**65)}}):
        assert encode(obj) == (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def test_a_text_stream_without_a_byte_buffer_gets_the_same_lines(capsys):
    status, lines = run(["decode", str(SEGMENT)], capsys)
    text = io.StringIO()
    assert decode_command.write_records([SEGMENT], text) == status == 0
    assert [json.loads(line) for line in text.getvalue().splitlines()] == lines and len(lines) == 34  # offsets 26-59


def test_lines_to_a_real_file_descriptor_are_the_same_unbuffered_or_not(tmp_path, capsys):
    """Under PYTHONUNBUFFERED=1 the command writes through a buffer of its own on stdout's descriptor; what
    lands in the file (text printed before it included) equals what an in-memory stream gets."""
    _, expected = run(["decode", str(SNAPSHOT), str(SEGMENT)], capsys)
    code = ("import sys; from jobs import decode_command; print('before'); "
            f"sys.exit(decode_command.main(['decode', {str(SNAPSHOT)!r}, {str(SEGMENT)!r}]))")
    for unbuffered in ("1", ""):
        target = tmp_path / f"out{unbuffered}.jsonl"
        with open(target, "wb") as sink:
            proc = subprocess.run([sys.executable, "-c", code], stdout=sink, cwd=Path(__file__).resolve().parents[2],
                                  env={**os.environ, "PYTHONUNBUFFERED": unbuffered})
        assert proc.returncode == 0
        first, *rest = target.read_text().splitlines()
        assert first == "before" and [json.loads(line) for line in rest] == expected and len(expected) == 57


@pytest.fixture
def doubled_segment(tmp_path):
    """The devsample segment twice over: sound framing, twice the batches (offsets repeat; the lines say so)."""
    path = tmp_path / "00000000000000000026.log"
    path.write_bytes(SEGMENT.read_bytes() * 2)
    return path


def test_a_large_file_is_cut_at_batch_starts_and_its_parts_come_out_in_file_order(doubled_segment, monkeypatch,
                                                                                  capsys):
    _, serial = run(["decode", str(doubled_segment)], capsys)
    monkeypatch.setattr(decode_command, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(decode_command, "_processes", lambda: 3)
    parts = decode_command._parts(doubled_segment, 3)
    starts = [b["position"] for b in metadata_log.iter_metadata_batches(doubled_segment)]
    assert len(parts) == 3 and parts[0][0] == 0 and parts[-1][1] is None
    assert all(start in starts for start, _ in parts) and [e for _, e in parts[:-1]] == [s for s, _ in parts[1:]]
    status, parallel = run(["decode", str(doubled_segment)], capsys)
    assert status == 0 and parallel == serial and len(serial) == 2 * 34


def test_a_part_whose_process_fails_is_decoded_by_the_parent(doubled_segment, monkeypatch, capsys):
    _, serial = run(["decode", str(doubled_segment), str(SNAPSHOT)], capsys)
    monkeypatch.setattr(decode_command, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(decode_command, "_processes", lambda: 2)

    def dies(*_args):
        raise SystemExit(3)

    monkeypatch.setattr(decode_command, "_part_into", dies)
    status, lines = run(["decode", str(doubled_segment), str(SNAPSHOT)], capsys)
    assert status == 0 and lines == serial

    def no_room(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(decode_command.tempfile, "TemporaryFile", no_room)  # no spool: the part is decoded here
    monkeypatch.setattr(decode_command, "_processes", lambda: 3)
    status, lines = run(["decode", str(doubled_segment), str(SNAPSHOT)], capsys)
    assert status == 0 and lines == serial


def test_unsound_framing_is_decoded_in_one_pass_where_the_error_is(tmp_path, monkeypatch, capsys):
    broken = tmp_path / "00000000000000000026.log"
    data = SEGMENT.read_bytes()
    broken.write_bytes(data + data[:-10])  # the second copy's last batch cut short
    _, serial = run(["decode", str(broken)], capsys)
    monkeypatch.setattr(decode_command, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(decode_command, "_processes", lambda: 2)
    assert decode_command._parts(broken, 2) == [(0, None)]
    status, lines = run(["decode", str(broken)], capsys)
    assert status == 1 and lines == serial and lines[-1]["error"]["kind"] == "truncated_batch"
    assert decode_command._parts(broken.with_name("missing.log"), 2) == [(0, None)]
    assert decode_command._parts(SNAPSHOT, 1) == [(0, None)]


def test_parts_decoded_by_child_processes_reach_a_real_file_in_order(doubled_segment, tmp_path, capsys):
    """The parallel path through stdout's own descriptor: what was printed before comes first, no line twice."""
    _, expected = run(["decode", str(doubled_segment)], capsys)
    code = ("import sys; from jobs import decode_command; decode_command.PARALLEL_MIN_BYTES = 0; "
            "decode_command._processes = lambda: 3; print('before'); "
            f"sys.exit(decode_command.main(['decode', {str(doubled_segment)!r}]))")
    target = tmp_path / "out.jsonl"
    with open(target, "wb") as sink:
        proc = subprocess.run([sys.executable, "-c", code], stdout=sink, cwd=Path(__file__).resolve().parents[2],
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0
    first, *rest = target.read_text().splitlines()
    assert first == "before" and [json.loads(line) for line in rest] == expected and len(expected) == 68
