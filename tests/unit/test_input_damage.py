"""Which quarantined inputs are damage to the capture (never a finding about Kafka) and the inputs.gaps entry
each leaves (issue #65). Rows are bronze_ingest_files rows as the executors build them."""
import pytest

from jobs.ingest.input_damage import damage_fact, damaged_sql, from_fact, is_damaged
from jobs.run_outcome import gaps_from_damaged_inputs
from udfs import pack_reader


def _pack(kind, message="m"):
    return {"path": "broker-2.jsonl.gz", "file_kind": "packed_snapshot", "status": "quarantined",
            "error_kind": kind, "error_message": message, "broker_id": 2, "bytes": 3000, "rows_produced": 73}


def test_a_pack_that_lost_entries_is_damage_but_refused_hostile_members_are_not():
    for kind in ("truncated_pack", "corrupt_pack", "count_mismatch", "bad_header", "too_many_errors"):
        assert is_damaged(_pack(kind)), kind
    for kind in ("unsafe_member", "unsafe_path", "garbage_after_frame"):  # every real entry was still read
        assert not is_damaged(_pack(kind)), kind
    assert not is_damaged({**_pack("truncated_pack"), "status": "ok"})


def test_every_pack_damage_kind_is_a_kind_the_pack_reader_reports():
    from jobs.ingest.input_damage import PACK_DAMAGE_KINDS

    assert set(PACK_DAMAGE_KINDS) <= set(pack_reader.PACK_ERROR_KINDS)


def test_kafka_files_kafka_finds_corrupt_are_findings_not_damage():
    """A corrupt partition.metadata is Kafka's own problem (Kafka's PartitionMetadataFile.read throws and the
    log dir goes offline): CORRUPT_PARTITION_METADATA reports it. Only unreadable inputs are damage; a file
    a running broker deleted or rolled between listing and read is its churn."""
    pm = {"path": "d/t-0/partition.metadata", "file_kind": "partition_metadata", "status": "quarantined",
          "error_kind": "bad_version", "error_message": "bad version"}
    assert not is_damaged(pm)
    unreadable = {**pm, "error_kind": "io_error", "error_message": "unreadable: [Errno 13] Permission denied"}
    assert is_damaged(unreadable)
    assert not is_damaged({**unreadable, "error_message": "vanished: gone between listing and read"})
    assert not is_damaged({**unreadable, "error_message": "changed_during_read"})


@pytest.mark.spark
def test_the_sql_form_decides_as_the_python_one(spark):
    rows = [_pack(k) for k in ("truncated_pack", "unsafe_member", "bad_header")] + [
        {"path": "x", "file_kind": "checkpoint", "status": "quarantined", "error_kind": "io_error",
         "error_message": m} for m in ("unreadable: EACCES", "vanished", None)] + [
        {"path": "y", "file_kind": None, "status": "quarantined", "error_kind": "io_error", "error_message": "EOF"}]
    rows = [{k: r.get(k) for k in ("path", "file_kind", "status", "error_kind", "error_message")} for r in rows]
    for i, r in enumerate(rows):
        r["path"] = f"{r['path']}-{i}"
    df = spark.createDataFrame(rows, "path string, file_kind string, status string, error_kind string, "
                                     "error_message string")
    picked = {r["path"] for r in df.where(damaged_sql()).collect()}
    assert picked == {r["path"] for r in rows if is_damaged(r)} and len(picked) == 5


def test_the_gap_names_file_node_what_and_how_much_was_read():
    fact = damage_fact({**_pack("truncated_pack", "pack ends in the middle of its gzip stream (truncated)")})
    (gap,) = gaps_from_damaged_inputs([from_fact(fact)])
    assert gap["reason"] == "damaged_input" and gap["file"] == "broker-2.jsonl.gz" and gap["node"] == 2
    assert gap["error_kind"] == "truncated_pack" and gap["rows_read"] == 73 and gap["bytes"] == 3000
    assert "truncated" in gap["message"] and "node 2" in gap["message"] and "73 rows read" in gap["message"]
    assert damage_fact(_pack("unsafe_member")) is None


def test_a_file_that_is_not_a_pack_has_no_node_and_says_so():
    fact = damage_fact({**_pack("bad_header", "named like a collector pack but is neither"), "broker_id": None,
                        "rows_produced": 0, "bytes": 17})
    (gap,) = gaps_from_damaged_inputs([from_fact(fact)])
    assert gap["node"] is None and "node unknown" in gap["message"] and "neither" in gap["message"]


@pytest.fixture(scope="module")
def packed_devsample(tmp_path_factory):
    """The real devsample's brokers packed by the collector, broker 103's pack cut to its first 3,000 bytes
    (``head -c 3000``), and a plain-text file named like a pack."""
    from collector.cli import main as collect
    from tests.reliability.corpus_capture import copy_devsample

    base = tmp_path_factory.mktemp("packed")
    tree = copy_devsample(base / "tree")
    capture = base / "capture"
    capture.mkdir()
    for broker in ("broker-101", "broker-103"):
        assert collect(["--log-dir", str(tree / broker / "kafka-logs"), "--include-metadata-log",
                        "--out", str(capture / f"{broker}.jsonl.gz")]) == 0
    whole = (capture / "broker-103.jsonl.gz").read_bytes()
    (capture / "broker-103.jsonl.gz").write_bytes(whole[:3000])
    (capture / "broker-109.jsonl.gz").write_text("hello\nnot a pack\n")
    from tests.reliability.conftest import ingest_rows

    return ingest_rows(capture)


def test_a_cut_pack_and_a_text_file_named_like_one_are_damaged_inputs(packed_devsample):
    files = {r["path"]: r for r in packed_devsample["bronze_ingest_files"]}
    cut, text, whole = files["broker-103.jsonl.gz"], files["broker-109.jsonl.gz"], files["broker-101.jsonl.gz"]
    assert cut["status"] == "quarantined" and cut["error_kind"] == "truncated_pack"
    assert text["status"] == "quarantined" and text["file_kind"] == "packed_snapshot"
    assert text["error_kind"] == "bad_header" and "neither a pack" in text["error_message"]
    assert whole["status"] == "ok"
    facts = {f["source"]: from_fact(f) for f in packed_devsample["_ingest_facts"] if f["fact"] == "damaged_input"}
    assert set(facts) == {"broker-103.jsonl.gz", "broker-109.jsonl.gz"}
    assert facts["broker-103.jsonl.gz"]["node"] == 103 and facts["broker-103.jsonl.gz"]["bytes"] == 3000
    assert facts["broker-109.jsonl.gz"]["node"] is None


def test_a_log_dir_the_collector_could_not_list_whole_is_a_damaged_input_of_its_node(tmp_path):
    """The collector flags a log dir whose listing broke off (``incomplete``, collector/pack_format.py): its
    node's absences are then undecided, as for a cut pack. A real devsample log dir, its walk's root entry
    flagged as the collector flags it."""
    import collector
    from jobs.ingest.decode_tasks import walk_options
    from jobs.ingest.log_dir_rows import DecodeOptions, decode_entries
    from jobs.ingest.tagged_rows import RowSink
    from tests.reliability.corpus_capture import copy_devsample
    from tests.settings_from import settings_from

    tree = copy_devsample(tmp_path / "tree")
    log_dir = str(tree / "broker-103" / "kafka-logs")
    options = DecodeOptions.from_settings(settings_from().ingest, defer_metadata_records=False)
    entries = list(collector.walk_log_dirs([log_dir], walk_options(options), collector.default_fs()))
    root = next(e for e in entries if e["path"] == "")
    root["flags"] = ["incomplete"]
    root["error"] = "[Errno 5] Input/output error"
    sink = RowSink()
    list(decode_entries(iter(entries), sink, options, display=lambda _: "broker-103/kafka-logs",
                        open_file_for=lambda _: (lambda rel: open(f"{log_dir}/{rel}", "rb"))))
    facts = [from_fact(f) for f in list(sink._rows["_ingest_facts"]) if f["fact"] == "damaged_input"]
    assert facts == [{"file": "broker-103/kafka-logs", "node": 103, "file_kind": "log_dir", "error_kind": "io_error",
                      "error": "incomplete: [Errno 5] Input/output error", "rows_read": facts[0]["rows_read"],
                      "bytes": None}]
    (gap,) = gaps_from_damaged_inputs(facts)
    assert gap["node"] == 103 and "incomplete" in gap["message"] and "entries listed" in gap["message"]
