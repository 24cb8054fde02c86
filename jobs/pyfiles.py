"""``kafka-recon pyfiles``: the job's code as one zip for ``spark-submit --py-files`` (and ``spark.submit.pyFiles``).

Why a zip of its own: Spark puts a ``--py-files`` .zip/.egg/.py on the executors' (and a cluster-mode driver's)
``sys.path``, not a wheel. The zip holds the packages ``jobs``, ``udfs`` and ``collector`` with their package data
(record schemas, report and Data Docs assets) and conf/*.yaml as ``jobs/conf`` — what the wheel holds, read through
importlib.resources either way. The executors still need the wheel's dependencies (pyarrow, deltalake, the codecs:
``requirements-databricks.txt``) in the Python Spark gives them (``spark.pyspark.python`` / ``PYSPARK_PYTHON``).
"""
from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

PACKAGES = ("jobs", "udfs", "collector")
SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")


def _package_root(name: str) -> Path:
    module = __import__(name)
    return Path(module.__file__).resolve().parent


def _conf_source() -> Path:
    """conf/*.yaml: the source tree's conf/ (a checkout), else the installed package's jobs/conf (a wheel)."""
    from jobs.config import default_conf_dir

    folder = default_conf_dir()
    return Path(str(folder))


def zip_entries() -> Iterator[Tuple[Path, str]]:
    """``(file, name in the zip)`` for every file the zip holds, in a stable order."""
    for name in PACKAGES:
        root = _package_root(name)
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (path.is_dir() or any(part in SKIPPED_DIRS for part in relative.parts)
                    or path.name.endswith(SKIPPED_SUFFIXES) or (name == "jobs" and relative.parts[0] == "conf")):
                continue
            yield path, f"{name}/{relative.as_posix()}"
    for path in sorted(_conf_source().glob("*.yaml")):
        yield path, f"jobs/conf/{path.name}"


def build_zip(target: Path) -> List[str]:
    """Write the zip to ``target`` (replacing a previous one); returns the names it holds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    names: List[str] = []
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, name in zip_entries():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # the same code gives the same bytes
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
            names.append(name)
    partial.replace(target)
    return names


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kafka-recon pyfiles",
                                     description="Write the job's code as one zip for spark-submit --py-files.")
    parser.add_argument("out", nargs="?", default="dist/kafka_recon.zip", help="zip to write (dist/kafka_recon.zip)")
    args = parser.parse_args(argv)
    names = build_zip(Path(args.out))
    print(f"{args.out}: {len(names)} files (jobs, udfs, collector, jobs/conf)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
