"""The --py-files zip (jobs/pyfiles.py, ``make dist``) runs the job's code from inside the zip: its package data
(record schemas, conf/*.yaml, report assets) is read through importlib.resources, never through a file path.

The oracle for the decoder is Kafka's own record: a real metadata segment of the devsample capture decodes to the
same records from the zip as from the source tree."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from jobs.pyfiles import build_zip

ROOT = Path(__file__).resolve().parents[2]
SEGMENT = ROOT / "tests/fixtures/kafka-devsample/broker-101/kafka-logs/__cluster_metadata-0/00000000000000000000.log"

PROBE = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import jobs, udfs
from jobs.settings import Settings
from udfs.metadata_log import iter_metadata_records
from jobs.report.html_page import _asset
settings = Settings.load()
records = [[r.offset, r.type, r.version, r.data] for r in iter_metadata_records(sys.argv[2])]
print(json.dumps({"jobs": jobs.__file__, "udfs": udfs.__file__, "master": settings.spark.master,
                  "records": records, "css": len(_asset("report.css"))}, default=str))
'''


def _probe(path_entry: str, cwd: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, path_entry, str(SEGMENT)], capture_output=True, text=True,
                         cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_zip_holds_the_packages_and_conf(tmp_path):
    names = build_zip(tmp_path / "kafka_recon.zip")
    assert {"jobs/conf/default.yaml", "jobs/conf/checks.yaml", "udfs/schemas/metadata_records.json",
            "jobs/nightly.py", "collector/walk.py", "jobs/report/static/report.css"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    with zipfile.ZipFile(tmp_path / "kafka_recon.zip") as zf:
        assert zf.read("jobs/conf/default.yaml") == (ROOT / "conf/default.yaml").read_bytes()
    assert build_zip(tmp_path / "again.zip") == names
    assert (tmp_path / "again.zip").read_bytes() == (tmp_path / "kafka_recon.zip").read_bytes()


def test_code_runs_from_the_zip_as_from_the_tree(tmp_path):
    zip_path = tmp_path / "kafka_recon.zip"
    build_zip(zip_path)
    from_zip = _probe(str(zip_path), tmp_path)
    assert from_zip["jobs"].startswith(str(zip_path)) and from_zip["udfs"].startswith(str(zip_path))
    from_tree = _probe(str(ROOT), tmp_path)
    assert from_tree["jobs"].startswith(str(ROOT / "jobs"))
    assert from_zip["records"] == from_tree["records"] and len(from_zip["records"]) > 10
    assert all(r[3] is not None for r in from_zip["records"])  # every record decoded, by the zip's schemas
    assert from_zip["master"] == from_tree["master"] and from_zip["css"] == from_tree["css"] > 0
