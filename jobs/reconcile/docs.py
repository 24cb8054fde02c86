"""docs/checks.md generated from conf/checks.yaml, so the README's check list never drifts from the code.

Run ``python -m jobs.reconcile.docs > docs/checks.md`` after editing conf/checks.yaml; a test compares them.
"""
from __future__ import annotations

import re
import sys

from .catalogue import CHECK_IDS, FAMILIES, REPLICA_PRECEDENCE, Catalogue, default_catalogue

FAMILY_TITLES = {
    "stale_replicas": "Stale replicas (one finding per replica dir)",
    "log_dirs": "Log dirs and nodes (one finding per log dir)",
    "producer_ids": "Producer ids",
    "deletes": "Deletes",
    "kip253": "KIP-253",
    "metadata_log": "Metadata log",
    "restart_hazards": "Restart hazards (offsets the broker acts on at its next start)",
    "transactions": "Transactions",
    "leader_epochs": "Leader-epoch history",
    "meta_properties": "meta.properties across the capture",
    "reassignments": "Reassignments",
}

INTRO = """\
# Checks

kafka-recon replays the controller's metadata (KRaft snapshot + metadata log, or ZooKeeper znodes and
controller logs), joins every replica directory on every captured disk to it **by topic id** (never by name:
`-delete`/`-stray` names cut long topic names short), and reports each difference as a finding with a
stable id. Severities, texts and thresholds live in `conf/checks.yaml`; this page is generated from it
(`python -m jobs.reconcile.docs > docs/checks.md`).

Every finding says what is wrong (`message`), where (cluster, broker, log dir, dir name, topic name and id,
partition), how many bytes, since when (`since`), the evidence (`evidence` JSON: records, offsets, files) and
what to do (`remediation`). A finding's id is `sha256(check_id | cluster | broker | log dir | dir name |
topic id | topic name | partition | extra key)`, stable across runs; gold_findings keeps it open while seen and
marks it resolved at the first capture that no longer shows it.

## Rules that apply to every check

- **Kafka's own stray rule.** A KRaft broker treats a replica as stray when it has no topic id
  (no `partition.metadata`), when the image has no partition `(topic id, partition)`, or when its replicas
  do not include the broker (`LogManager.isStrayKraftReplica`). The stale-replica checks reproduce exactly
  that; a lagging replica, or one outside the ISR, is never a finding.
- **One finding per replica dir**, the most specific one, in this order: {precedence}.
  `-stray` dirs only ever get STRAY_DIR; `-future` dirs are never duplicates.
- **Time of deletes.** The age of a `-delete` dir or of an unfinished delete counts from the
  RemoveTopicRecord (ZooKeeper: the delete marker / "Deletion of topic" line / the rename logged in
  server.log, or the record that moved the replica away) and restarts at the broker's latest registration,
  because Kafka re-arms the delete timer when it restarts. Directory mtimes are never used: a rename does not
  change them. Thresholds: `reconcile.file_delete_delay_ms` ({delay} ms, Kafka's `file.delete.delay.ms`
  default) plus `reconcile.delete_grace_ms` ({grace} ms); a ZooKeeper delete marker is stuck after
  `reconcile.zk_delete_stuck_after_ms` ({stuck} ms) or as soon as the controller logged that it halted it.
- **Brokers that are fenced, unregistered or absent** (not registered) at capture time are reported as such
  in `broker_state`, and the finding's message says so. A broker whose disks were not captured is never
  reported as missing replicas. A deleted topic's dirs on a fenced or stopped broker are reported at once
  (the delete grace is for deletes in progress; such a broker cannot progress it).
- **Node kinds and log dirs.** Brokers, dedicated controllers (`process.roles=controller`:
  RegisterControllerRecord, no broker registration) and combined nodes share one id space. Every captured
  log dir gets a state in `silver_log_dirs`: *registered* (in its broker's latest registration: the
  RegisterBrokerRecord LogDirs, narrowed by a BrokerRegistrationChangeRecord LogDirs when a dir failed),
  *unregistered* (the broker listed it before, or replicas are assigned to it, but not now: a disk that failed
  and came back), *offline* (such a dir missing from the capture), *controller_metadata* (a controller's
  metadata dir: a copy of the metadata log, never foreign), *decommissioned* (its broker was unregistered),
  *foreign* (another cluster.id, a directory.id another broker registered or no broker ever registered) or
  *no_dir_registration* (ZooKeeper, KRaft before 3.7). Replicas in unregistered dirs are matched like any
  other (duplicates across any two dirs of a broker count); replicas assigned to an offline dir are listed in
  its OFFLINE_LOG_DIR finding, never reported missing; foreign, decommissioned and controller dirs get one
  finding per log dir, not per replica. A `-future` dir is a move in progress (no finding) until it falls
  `reconcile.future_move_stuck_ms` behind its source replica.
- **Metadata history.** The image at capture is the authoritative copy's snapshot plus the log after it;
  creations and deletions are dated from that copy's retained log (records below the snapshot included);
  a topic only in the snapshot was created "before the retained history".

"""


def _ids(text: str) -> str:
    return re.sub(r"\b(KAFKA-\d+|KIP-\d+)\b", r"**\1**", text)


def render(catalogue: Catalogue) -> str:
    t = catalogue.thresholds
    out = [INTRO.format(precedence=", ".join(f"`{c}`" for c in REPLICA_PRECEDENCE), delay=t.file_delete_delay_ms,
                        grace=t.delete_grace_ms, stuck=t.zk_delete_stuck_after_ms)]
    for family in FAMILIES:
        if not any(catalogue[c].family == family for c in CHECK_IDS):
            continue
        out.append(f"## {FAMILY_TITLES[family]}\n")
        for check_id in CHECK_IDS:
            spec = catalogue[check_id]
            if spec.family != family:
                continue
            out.append(f"### `{check_id}` — {spec.title}\n")
            reclaim = " Reclaimable: its bytes count as bytes reclaimable and the plan quarantines it." \
                if spec.reclaimable else ""
            out.append(f"*Severity: {spec.severity}.{reclaim}*\n")
            out.append(f"**What.** {spec.description}\n")
            out.append(f"**Why it matters.** {_ids(spec.why)}\n")
            fix = re.sub(r"\{(details\.)?([a-z_]+)\}", lambda m: f"<{m.group(2).replace('_', ' ')}>", spec.remediation)
            out.append(f"**How to fix.** {fix}\n")
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    sys.stdout.write(render(default_catalogue()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
