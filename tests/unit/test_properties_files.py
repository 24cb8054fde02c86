"""udfs.properties_files: java.util.Properties (JDK 17 vectors), meta.properties, checkpoints; and
udfs.json_state_files: quorum-state and .kafka_cleanshutdown - on the real devsample and ZK-capture files
plus every malformed variant."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zk_sample import extract

from udfs import json_state_files as jsf
from udfs import properties_files as pf

ORACLE = json.loads((Path(__file__).parents[1] / "fixtures/jdk-oracle/jdk17-vectors.json").read_text())
WHEN = datetime(2026, 11, 22, 8, 32, 56, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def zk1(tmp_path_factory):
    return extract("Z1", tmp_path_factory.mktemp("zk"))


# ---------------------------------------------------------------- java.util.Properties

@pytest.mark.parametrize("hex_bytes,expected", ORACLE["properties_load"], ids=range(len(ORACLE["properties_load"])))
def test_load_matches_jdk17(hex_bytes, expected):
    props, error = pf.load_properties(bytes.fromhex(hex_bytes))
    if "error" in expected:
        assert error is not None and "IllegalArgumentException: " + error.message == expected["error"]
        assert error.kind == "malformed_line"
    else:
        assert error is None and props == expected["ok"]


@pytest.mark.parametrize("hex_bytes,expected", ORACLE["properties_load"], ids=range(len(ORACLE["properties_load"])))
def test_the_collector_reads_properties_with_the_same_parser(hex_bytes, expected):
    """One parser: what the collector puts in a pack's header is what the JDK (and ingest) read."""
    import collector

    text = bytes.fromhex(hex_bytes).decode("latin-1")
    if "error" in expected:
        with pytest.raises(collector.MalformedProperty, match="Malformed"):
            list(collector.java_properties(text))
    else:
        assert collector.parse_properties(text) == expected["ok"]


def _without_date(text: str) -> list:
    lines = text.split("\n")
    assert lines[0] == "#" and lines[1].startswith("#")
    return [lines[0]] + lines[2:]


@pytest.mark.parametrize("index", range(len(ORACLE["properties_store"])))
def test_store_matches_jdk17_layout_order_and_escapes(index):
    expected = ORACLE["properties_store"][index]
    props = dict(line.split("=", 1) for line in _without_date(expected)[1:] if line)
    loaded, _ = pf.load_properties(expected.encode("utf-8"))  # undo the escapes to get the logical values
    keys_in_insertion_order = {"version": 0, "cluster.id": 1, "node.id": 2, "broker.id": 2, "directory.id": 3}
    ordered = dict(sorted(loaded.items(), key=lambda kv: keys_in_insertion_order[kv[0]]))
    if not all(v.isascii() for v in ordered.values()):
        ordered = {k: v.encode("latin-1").decode("utf-8") for k, v in ordered.items()}  # load() reads Latin-1
    written = pf.store_properties(ordered, WHEN).decode("utf-8")
    assert _without_date(written) == _without_date(expected)
    assert len(props) == len(ordered)


@pytest.mark.parametrize("ms,text", ORACLE["date_to_string"])
def test_date_line_is_java_date_to_string_in_utc(ms, text):
    assert pf.java_date_string(datetime.fromtimestamp(ms / 1000, timezone.utc)) == text


# ---------------------------------------------------------------- meta.properties

def _devsample_log_dirs(devsample_dir):
    nodes = json.loads((devsample_dir / "expected.json").read_text())["nodes"]
    for node_id, node in nodes.items():
        for d in node["logDirs"]:
            yield int(node_id), d


def test_devsample_meta_properties(devsample_dir):
    cluster_id = json.loads((devsample_dir / "expected.json").read_text())["clusterId"]
    count = 0
    for node_id, d in _devsample_log_dirs(devsample_dir):
        data = (devsample_dir / d["logDir"] / "meta.properties").read_bytes()
        meta = pf.parse_meta_properties(data)
        assert meta.ok and not meta.directory_id_reserved
        assert (meta.version, meta.node_id, meta.cluster_id, meta.directory_id) == (
            int(d["metaPropertiesVersion"]), node_id, cluster_id, d["directoryId"])
        # our writer reproduces Kafka's bytes exactly, apart from the date line
        header_date = data.decode().split("\n")[1][1:]
        when = datetime.strptime(header_date, "%a %b %d %H:%M:%S UTC %Y").replace(tzinfo=timezone.utc)
        assert pf.write_meta_properties(meta.version, meta.node_id, meta.cluster_id, meta.directory_id, when) == data
        count += 1
    assert count == 5


def test_zk_capture_meta_properties_v0(zk1):
    expected = json.loads((zk1 / "expected.json").read_text())
    for broker in (1, 2, 3):
        data = (zk1 / f"broker-{broker}" / "meta.properties").read_bytes()
        meta = pf.parse_meta_properties(data)
        assert (meta.version, meta.node_id, meta.cluster_id, meta.directory_id, meta.error) == (
            0, broker, expected["clusterId"]["id"], None, None)
        when = datetime.strptime(data.decode().split("\n")[1][1:], "%a %b %d %H:%M:%S UTC %Y").replace(tzinfo=timezone.utc)
        assert pf.write_meta_properties(0, broker, meta.cluster_id, None, when) == data


V1 = "version=1\nnode.id=1\ncluster.id=zd2vLVrZQlCLJj8-k7A10w\n"


@pytest.mark.parametrize("text,kind,message", [
    ("version=2\nnode.id=1\ncluster.id=c\n", "bad_version", "Unknown meta.properties version number 2"),
    ("version=-1\n", "bad_version", "Unknown meta.properties version number -1"),
    ("version=x\n", "bad_version", "Invalid meta.properties version string 'x'"),
    ("version=1\ncluster.id=c\n", "missing_key", "Failed to find node.id"),
    ("version=1\nnode.id=1 \ncluster.id=c\n", "malformed_line", "Unable to read node.id as a base-10 number."),
    ("version=1\nnode.id=1\n", "missing_key", "cluster.id was not found."),
    ("version=0\nbroker.id=one\n", "malformed_line", "Unable to read broker.id as a base-10 number."),
    (V1 + "directory.id=3Adc4FjfTeypRWROmQDNI\n", "invalid_uuid",
     "Unable to read directory.id as a Uuid: Last unit does not have enough valid bits"),
    (V1 + "directory.id=\n", "invalid_uuid", "Unable to read directory.id as a Uuid: Input string `` decoded as 0 "
                                             "bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
    ("version=1\nnode.id=\\u12\n", "malformed_line", "Malformed \\uxxxx encoding."),
    # check order: a bad directory.id is reported before the missing cluster.id
    ("version=1\nnode.id=1\ndirectory.id=??\n", "invalid_uuid", "Unable to read directory.id as a Uuid: Illegal base64 character 3f"),
])
def test_meta_properties_rejections(text, kind, message):
    meta = pf.parse_meta_properties(text.encode())
    assert not meta.ok and (meta.error.kind, meta.error.message) == (kind, message)


@pytest.mark.parametrize("text,version,node_id,cluster_id", [
    ("", 0, None, None),                                   # no version means 0; broker.id optional in v0
    ("cluster.id=my@cluster@id\n", 0, None, "my@cluster@id"),  # cluster.id is not validated
    ("version = 1\nnode.id:7\ncluster.id c\n", 1, 7, "c"),  # any separator
    ("version=\\u0031\nnode.id=7\ncluster.id=c\n", 1, 7, "c"),
    ("version= 1 \t\nnode.id=7\ncluster.id=c\n", 1, 7, "c"),  # version is trim()med, node.id is not
    ("version=0\nbroker.id=+5\n", 0, 5, None),
])
def test_meta_properties_accepted(text, version, node_id, cluster_id):
    meta = pf.parse_meta_properties(text.encode())
    assert meta.ok and (meta.version, meta.node_id, meta.cluster_id) == (version, node_id, cluster_id)


def test_meta_properties_reads_latin1_and_flags_reserved_directory_ids():
    meta = pf.parse_meta_properties("version=0\ncluster.id=\u00e9\n".encode("utf-8"))
    assert meta.cluster_id == "\u00c3\u00a9"  # Kafka writes UTF-8 but Properties.load(InputStream) reads Latin-1
    lost = pf.parse_meta_properties((V1 + "directory.id=AAAAAAAAAAAAAAAAAAAAAg\n").encode())
    assert lost.ok and lost.directory_id_reserved and lost.directory_id == "AAAAAAAAAAAAAAAAAAAAAg"


def test_meta_properties_writer_validates_its_input():
    with pytest.raises(ValueError):
        pf.write_meta_properties(2, 1, "c")
    with pytest.raises(ValueError):
        pf.write_meta_properties(1, None, "c")
    with pytest.raises(ValueError):
        pf.write_meta_properties(1, 1, "c", directory_id="bad")
    assert pf.write_meta_properties(0, None, None, when=WHEN) == b"#\n#Sun Nov 22 08:32:56 UTC 2026\nversion=0\n"
    assert pf.write_meta_properties(1, 1, "c", when=WHEN, key_order="sorted").endswith(b"cluster.id=c\nnode.id=1\nversion=1\n")


# ---------------------------------------------------------------- checkpoint files

def test_devsample_offset_checkpoints(devsample_dir):
    files = sorted(devsample_dir.glob("broker-*/*/*-offset-checkpoint"))
    assert len(files) == 15
    for f in files:
        result = pf.parse_offset_checkpoint(f.read_bytes(), str(f))
        assert result.ok and result.version == 0 and len(result.entries) == result.expected_count
        assert pf.write_offset_checkpoint((e.topic, e.partition, e.offset) for e in result.entries) == f.read_bytes()
    hw = pf.parse_offset_checkpoint((devsample_dir / "broker-101/kafka-logs/replication-offset-checkpoint").read_bytes())
    assert hw.entries == (pf.OffsetEntry("clicks", 0, 2), pf.OffsetEntry("events", 0, 7), pf.OffsetEntry("events", 1, 5),
                          pf.OffsetEntry("inventory", 0, 10), pf.OffsetEntry("inventory", 2, 2))


def test_devsample_leader_epoch_checkpoints(devsample_dir):
    files = sorted(devsample_dir.glob("broker-*/*/*/leader-epoch-checkpoint"))
    assert len(files) > 20
    for f in files:
        result = pf.parse_leader_epoch_checkpoint(f.read_bytes(), str(f))
        assert result.ok and len(result.entries) == result.expected_count
        assert pf.write_leader_epoch_checkpoint((e.epoch, e.start_offset) for e in result.entries) == f.read_bytes()
    meta = pf.parse_leader_epoch_checkpoint(
        (devsample_dir / "broker-101/kafka-logs/__cluster_metadata-0/leader-epoch-checkpoint").read_bytes())
    assert meta.entries == (pf.EpochEntry(1, 0), pf.EpochEntry(2, 44))


def test_zk_capture_checkpoints_including_empty_ones(zk1):
    files = sorted(zk1.glob("broker-*/*checkpoint"))
    assert {f.name for f in files} == {"cleaner-offset-checkpoint", "log-start-offset-checkpoint",
                                       "recovery-point-offset-checkpoint", "replication-offset-checkpoint"}
    for f in files:
        result = pf.parse_offset_checkpoint(f.read_bytes(), str(f))
        assert result.ok, (f, result.error)
    empty = pf.parse_offset_checkpoint((zk1 / "broker-1/cleaner-offset-checkpoint").read_bytes())
    assert empty == pf.CheckpointResult(None, None, ())


P = "/d/recovery-point-offset-checkpoint"


@pytest.mark.parametrize("text,kind,message,line,exception", [
    ("1\n0\n", "bad_version", f"Unrecognised version:1, expected version: 0 in checkpoint file at: {P}", 1, "IOException"),
    ("x\n", "malformed_line", f"Malformed line in checkpoint file [{P}]: x", 1, "IOException"),
    ("0\n2 \n", "malformed_line", f"Malformed line in checkpoint file [{P}]: 2 ", 2, "IOException"),
    ("0\n1\nt 0\n", "malformed_line", f"Malformed line in checkpoint file [{P}]: t 0", 3, "IOException"),
    ("0\n1\n t 0 1\n", "malformed_line", f"Malformed line in checkpoint file [{P}]:  t 0 1", 3, "IOException"),
    ("0\n1\n\n", "malformed_line", f"Malformed line in checkpoint file [{P}]: ", 3, "IOException"),
    ("0\n1\nt x 1\n", "malformed_line", 'For input string: "x"', 3, "NumberFormatException"),
    ("0\n1\nt 0 9223372036854775808\n", "malformed_line", 'For input string: "9223372036854775808"', 3,
     "NumberFormatException"),
    ("0\n2\nt 0 1\n", "record_count_mismatch",
     f"Expected [2] entries in checkpoint file [{P}], but found only [1]", None, "IOException"),
    ("0\n0\nt 0 1\n", "record_count_mismatch",
     f"Expected [0] entries in checkpoint file [{P}], but found only [1]", None, "IOException"),
    ("0\n-1\n", "malformed_line", "Illegal Capacity: -1", 2, "IllegalArgumentException"),
])
def test_offset_checkpoint_rejections(text, kind, message, line, exception):
    result = pf.parse_offset_checkpoint(text.encode(), P)
    assert (result.error.kind, result.error.message, result.error.line, result.exception) == (kind, message, line, exception)


@pytest.mark.parametrize("text,entries", [
    ("", ()),
    ("0\n", ()),                 # version only: no entries, no error
    ("0\n0\n", ()),
    ("0\n1\nt\t0  5 \n", (pf.OffsetEntry("t", 0, 5),)),   # split on \s+, trailing whitespace dropped
    ("0\r\n1\r\nt 0 5", (pf.OffsetEntry("t", 0, 5),)),
    ("0\n1\nt +1 -5\n", (pf.OffsetEntry("t", 1, -5),)),
])
def test_offset_checkpoint_accepted(text, entries):
    result = pf.parse_offset_checkpoint(text.encode(), P)
    assert result.ok and result.entries == entries


def test_leader_epoch_checkpoint_rejections():
    bad = pf.parse_leader_epoch_checkpoint(b"0\n1\n0 0 0\n", "lec")
    assert bad.error.message == "Malformed line in checkpoint file [lec]: 0 0 0"
    assert pf.parse_leader_epoch_checkpoint(b"0\n1\n2147483648 0\n").error.message == 'For input string: "2147483648"'
    assert pf.parse_leader_epoch_checkpoint(b"\xfe").error.kind == "invalid_utf8"


# ---------------------------------------------------------------- quorum-state

def test_devsample_quorum_state_v0(devsample_dir):
    files = sorted(devsample_dir.glob("broker-*/*/__cluster_metadata-0/quorum-state"))
    assert len(files) == 4
    for f in files:
        state = jsf.parse_quorum_state(f.read_bytes(), str(f))
        assert state.ok and state.data_version == 0
        lagging = f.parts[-4] == "broker-103"  # 103's log stops at offset 44: it never saw epoch 2
        assert (state.leader_id, state.leader_epoch) == ((101, 1) if lagging else (102, 2))
        assert (state.voted_id, state.applied_offset, state.current_voters, state.cluster_id) == (-1, 0, (101, 102, 103), "")
        assert jsf.write_quorum_state(0, state.leader_id, state.leader_epoch, state.voted_id, None, state.cluster_id,
                                      state.applied_offset, state.current_voters) == f.read_bytes()


def test_quorum_state_v1_round_trip():
    data = jsf.write_quorum_state(1, 3, 7, 3, "3Adc4FjfTeypRWROmQDNIQ")
    assert data == (b'{"leaderId":3,"leaderEpoch":7,"votedId":3,"votedDirectoryId":"3Adc4FjfTeypRWROmQDNIQ",'
                    b'"data_version":1}')
    state = jsf.parse_quorum_state(data)
    assert state.ok and (state.leader_id, state.voted_directory_id, state.cluster_id) == (3, "3Adc4FjfTeypRWROmQDNIQ", "")
    with pytest.raises(ValueError):
        jsf.write_quorum_state(2)


Q0 = '{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":null,"data_version":0}'


@pytest.mark.parametrize("text,kind,message,exception", [
    ("", "empty_file", "File ended prematurely.", "EOFException"),
    ("[1]", "bad_json", "Deserialized node [1] is not an object node", "IOException"),
    ('{"leaderId":1}', "missing_key", 'Deserialized node {"leaderId":1} does not have data_version field', "IOException"),
    ('{"data_version":2}', "bad_version", "data_version (2) is not within the min (0) and max (1) supported version",
     "IllegalStateException"),
    ('{"data_version":-1}', "bad_version", "data_version (-1) is not within the min (0) and max (1) supported version",
     "IllegalStateException"),
    ('{"data_version":1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}', "missing_key",
     "QuorumStateData: unable to locate field 'leaderId', which is mandatory in version 1", "RuntimeException"),
    ('{"data_version":0,"leaderId":1,"leaderEpoch":1,"votedId":1}', "missing_key",
     "QuorumStateData: unable to locate field 'clusterId', which is mandatory in version 0", "RuntimeException"),
    (Q0.replace('"leaderId":1', '"leaderId":"1"'), "bad_json",
     "QuorumStateData: expected an integer or string type, but got STRING", "NumberFormatException"),
    (Q0.replace('"leaderId":1', '"leaderId":3000000000'), "bad_json",
     'QuorumStateData: failed to parse number: For input string: "3000000000"', "NumberFormatException"),
    (Q0.replace('"clusterId":""', '"clusterId":5'), "bad_json", "QuorumStateData expected a string type, but got OBJECT",
     "RuntimeException"),
    (Q0.replace('null', '[{"voterId":1},{}]'), "missing_key",
     "Voter: unable to locate field 'voterId', which is mandatory in version 0", "RuntimeException"),
    ('{"data_version":1,"leaderId":1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"x"}', "invalid_uuid",
     "Input byte[] should at least have 2 bytes for base64 bytes", "IllegalArgumentException"),
    ("{\"data_version\":", "bad_json", None, "JsonProcessingException"),
    ('{"data_version":NaN}', "bad_json", None, "JsonProcessingException"),
])
def test_quorum_state_rejections(text, kind, message, exception):
    state = jsf.parse_quorum_state(text.encode(), "qs")
    assert not state.ok and state.error.kind == kind and state.exception == exception
    if message is not None:
        assert state.error.message == message


def test_quorum_state_java_leniencies():
    # only the first line is read; trailing text after the JSON value is ignored; data_version goes through shortValue()
    assert jsf.parse_quorum_state((Q0 + " trailing\nsecond line").encode()).ok
    assert jsf.parse_quorum_state(Q0.replace('"data_version":0', '"data_version":"7"').encode()).data_version == 0
    assert jsf.parse_quorum_state(Q0.replace('"data_version":0', '"data_version":65536').encode()).data_version == 0
    assert jsf.parse_quorum_state(Q0.replace('"data_version":0', '"data_version":0.9').encode()).data_version == 0


# ---------------------------------------------------------------- .kafka_cleanshutdown

def test_clean_shutdown_round_trip_and_variants():
    assert jsf.write_clean_shutdown(29) == b'{"version":0,"brokerEpoch":29}'
    assert jsf.parse_clean_shutdown(b'{"version":0,"brokerEpoch":29}') == jsf.CleanShutdown(
        0, 29, {"version": 0, "brokerEpoch": 29})
    assert jsf.parse_clean_shutdown(b'{"brokerEpoch":"12","x":1}').broker_epoch == 12   # unknown keys ignored, coercion
    for bad, kind in ((b"", "bad_json"), (b"[]", "bad_json"), (b'{"version":0}', "missing_key"),
                      (b'{"brokerEpoch":null}', "missing_key"), (b'{"brokerEpoch":true}', "bad_json")):
        result = jsf.parse_clean_shutdown(bad)
        assert result.broker_epoch is None and result.error.kind == kind


# ---------------------------------------------------------------- never raise

@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120))
def test_random_bytes_never_raise(data):
    pf.load_properties(data)
    pf.parse_meta_properties(data)
    pf.parse_offset_checkpoint(data)
    pf.parse_leader_epoch_checkpoint(data)
    jsf.parse_quorum_state(data)
    jsf.parse_clean_shutdown(data)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab=:# !\\\n\r\t\fu0123456789AF")), max_size=50))
def test_random_properties_text_never_raises(text):
    props, error = pf.load_properties(text.encode("latin-1"))
    assert error is None or error.kind == "malformed_line"


def test_deeply_nested_json_and_huge_numbers_are_errors_not_crashes():
    assert jsf.parse_quorum_state(b"[" * 100000).error.kind == "bad_json"
    assert jsf.parse_clean_shutdown(b"[" * 100000).error.kind == "bad_json"
    # Jackson reads 1e400 as Infinity; (short) of it is -1
    assert jsf.parse_quorum_state(b'{"data_version":1e400}').error.message == (
        "data_version (-1) is not within the min (0) and max (1) supported version")
