#!/usr/bin/env bash
# README.md is assembled from the sections in docs/ (each owned by the stage it documents): `make readme`.
set -euo pipefail
cd "$(dirname "$0")"
demote() { sed -e 's/^## /### /' -e 's/^# /## /' "$1"; }
{
  cat README.head.md; echo
  demote ingest.md | sed 's/^### Ingest: captures/## Ingest: captures/'; echo
  echo "## Tables"; echo
  echo "Schemas are data (\`jobs/tables/{bronze,silver,gold}.py\`): one registry, one storage layer."; echo
  demote tables-layer.md; echo
  demote checks.md; echo
  cat report.md; echo
  cat README.tail.md; echo
  cat scenarios.md; echo
  echo "## Benchmarks"; echo
  if [ -f benchmarks.md ]; then demote benchmarks.md; echo; fi
  demote decode-performance.md; echo
  cat README.layout.md
} > ../README.md
