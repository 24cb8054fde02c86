"""Fuzz every decoder: ``python -m tests.fuzz.run_fuzz --executions 1000000`` (what ``make fuzz`` runs).

Two engines, one set of targets (tests/fuzz/targets.py) and seeds (real Kafka files + the malformed corpus):

- ``atheris`` (coverage-guided libFuzzer, the ``fuzz`` extra): runs in a child process so its exit does not
  cut the summary short; libFuzzer enforces ``-timeout`` per input and ``-rss_limit_mb``. The first byte
  of an input picks the target.
- ``python`` (no native dependency, seeded, reproducible): a mutation fuzzer over the same seeds with a
  per-input alarm and an address-space limit, going on after a crash so one run reports every distinct bug.

``--engine auto`` (default) uses atheris when it imports, else python. The run ends with one line::

    fuzz result engine=python executions=1000000 seconds=812.4 execs_per_sec=1231 crashes=0 timeouts=0 ...

and exits 0 when nothing was found, 1 otherwise. Each distinct crash is saved as a reproducer
(``<artifacts>/<target>-<kind>-<sha1>.bin``); replay one with ``--replay FILE --target NAME``.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

DEFAULT_TIME_PER_INPUT = 5.0
DEFAULT_RSS_LIMIT_MB = 2048
MAX_LEN = 64 * 1024
PROGRESS_SECONDS = 30.0


class InputTimeout(BaseException):
    """Raised by the alarm when one input runs too long (BaseException: decoders' ``except Exception`` miss it)."""


# ---------------------------------------------------------------------------------------------- mutations

INTERESTING_BYTES = (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, 0xFE, 0x0A, 0x0D, 0x20, 0x22, 0x2D, 0x3A, 0x3D, 0x5C,
                     0x7B, 0x7D, 0x5B, 0x5D, 0xC3, 0xE2)
INTERESTING_INTS = (0, 1, -1, 2, 12, 14, 17, 61, 0x7F, 0x80, 0xFF, 0x7FFF, -0x8000, 0xFFFF, 0x7FFFFFFF,
                    -0x80000000, 0x40000000, 0x7FFFFFFFFFFFFFFF, -0x8000000000000000)
TEXT_TOKENS = (b"-1", b"0", b"2147483648", b"-2147483649", b"99999999999999999999", b"null", b"true", b"[]",
               b"{}", b'"', b"\\u0000", b"\\", b":", b": ", b"=", b"\n", b"\r\n", b"\r", b"\xff", b"\xc3", b"\x00",
               b"NaN", b"1e400", b"AAAAAAAAAAAAAAAAAAAAAA", b"-delete", b".", b"..", b"/", b"%s")


def _int_bytes(rng: random.Random) -> bytes:
    value = rng.choice(INTERESTING_INTS)
    width = rng.choice((1, 2, 4, 8))
    fmt = {1: ">b", 2: ">h", 4: ">i", 8: ">q"}[width]
    lo, hi = -(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1
    value = max(lo, min(hi, value if value <= hi else value - (1 << (8 * width))))
    return struct.pack(fmt, value)


def mutate(data: bytes, rng: random.Random, pool: List[bytes], max_len: int = MAX_LEN) -> bytes:
    """1-4 random edits: bit flips, interesting bytes/ints, cuts, inserts, repeats, splices, text tokens."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        n = len(buf)
        op = rng.randrange(12)
        pos = rng.randrange(n + 1)
        if op == 0 and n:
            i = rng.randrange(n)
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            buf[rng.randrange(n)] = rng.choice(INTERESTING_BYTES)
        elif op == 2:
            chunk = _int_bytes(rng)
            buf[pos:pos + len(chunk)] = chunk
        elif op == 3 and n:
            del buf[pos:pos + rng.randint(1, 16)]
        elif op == 4:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 5 and n:
            del buf[rng.randrange(n):]
        elif op == 6 and n:
            start = rng.randrange(n)
            chunk = buf[start:start + rng.randint(1, 64)]
            buf[pos:pos] = chunk * rng.randint(1, 8)
        elif op == 7 and pool:
            other = rng.choice(pool)
            if other:
                start = rng.randrange(len(other))
                buf[pos:] = other[start:start + rng.randint(1, 512)]
        elif op == 8:
            buf[pos:pos] = b"\xff" * rng.randint(4, 11) + bytes([rng.randrange(128)])
        elif op == 9:
            buf[pos:pos] = rng.choice(TEXT_TOKENS)
        elif op == 10 and n:
            digits = [m.span() for m in re.finditer(rb"-?\d+", bytes(buf[:4096]))]
            if digits:
                a, b = rng.choice(digits)
                buf[a:b] = rng.choice(TEXT_TOKENS[:6])
        elif op == 11 and n > 1:
            a, b = sorted(rng.sample(range(n), 2))
            buf[a:b] = bytes(reversed(buf[a:b])) if rng.random() < 0.5 else bytes(b - a)
    return bytes(buf[:max_len])


# ---------------------------------------------------------------------------------------------- python engine

@dataclass
class Finding:
    target: str
    kind: str  # crash | timeout | memory
    summary: str
    reproducer: str
    count: int = 1


@dataclass
class Stats:
    engine: str
    executions: int = 0
    seconds: float = 0.0
    findings: Dict[Tuple[str, str, str], Finding] = field(default_factory=dict)
    max_rss_mb: float = 0.0
    per_target: Dict[str, int] = field(default_factory=dict)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings.values() if f.kind == kind)

    def line(self) -> str:
        rate = self.executions / self.seconds if self.seconds else 0.0
        return (f"fuzz result engine={self.engine} executions={self.executions} seconds={self.seconds:.1f} "
                f"execs_per_sec={rate:.0f} crashes={self.count('crash')} timeouts={self.count('timeout')} "
                f"memory={self.count('memory')} max_rss_mb={self.max_rss_mb:.0f} targets={len(self.per_target)}")


def _alarm(_signum, _frame):
    raise InputTimeout()


def _where(exc: BaseException) -> str:
    """file:line of the innermost project frame: distinct bugs get distinct keys."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "/udfs/" in f.filename or "/tests/fuzz/" in f.filename] or frames
    last = inner[-1] if inner else None
    return f"{Path(last.filename).name}:{last.lineno}" if last else "?"


def _save(artifacts: Path, target: str, kind: str, data: bytes) -> str:
    artifacts.mkdir(parents=True, exist_ok=True)
    path = artifacts / f"{target}-{kind}-{hashlib.sha1(data).hexdigest()[:12]}.bin"
    path.write_bytes(data)
    return str(path)


def _limit_address_space(rss_limit_mb: int) -> None:
    """Cap virtual memory at what the process holds now plus ``rss_limit_mb``: a runaway allocation becomes a
    MemoryError in the input that caused it instead of an OOM kill of the machine."""
    try:
        with open("/proc/self/status") as status:
            vm_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return
    soft = (vm_kb << 10) + (rss_limit_mb << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_python(targets, executions: int, seed: int, time_per_input: float, rss_limit_mb: int, artifacts: Path,
               max_len: int = MAX_LEN, log=sys.stderr) -> Stats:
    rng = random.Random(seed)
    stats = Stats("python")
    pools: Dict[str, List[bytes]] = {}
    for target in targets:
        pools[target.name] = [s for s in target.seeds() if len(s) <= max_len] or [b""]
        stats.per_target[target.name] = 0
    _limit_address_space(rss_limit_mb)
    previous = signal.signal(signal.SIGALRM, _alarm)
    start = last_report = time.monotonic()
    try:
        for i in range(executions):
            target = targets[i % len(targets)]
            pool = pools[target.name]
            data = rng.choice(pool)
            if rng.random() < 0.97:
                data = mutate(data, rng, pool, max_len)
            _run_one(target, data, time_per_input, stats, artifacts)
            stats.executions += 1
            stats.per_target[target.name] += 1
            now = time.monotonic()
            if now - last_report >= PROGRESS_SECONDS:
                last_report = now
                stats.seconds = now - start
                stats.max_rss_mb = _max_rss_mb()
                print("fuzz progress " + stats.line().split(" ", 2)[2], file=log, flush=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    stats.seconds = time.monotonic() - start
    stats.max_rss_mb = _max_rss_mb()
    return stats


def _run_one(target, data: bytes, time_per_input: float, stats: Stats, artifacts: Path) -> None:
    kind = None
    signal.setitimer(signal.ITIMER_REAL, time_per_input)
    try:
        target.run(data)
    except InputTimeout:
        kind, key, summary = "timeout", "timeout", f"over {time_per_input}s on one input"
    except MemoryError as exc:
        kind, key, summary = "memory", _where(exc), "MemoryError"
    except target.allowed:
        pass
    except Exception as exc:  # noqa: BLE001 - every other exception is the bug being looked for
        kind, key = "crash", f"{type(exc).__name__}@{_where(exc)}"
        summary = f"{type(exc).__name__}: {str(exc)[:300]} at {_where(exc)}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if kind is None:
        return
    found = stats.findings.get((target.name, kind, key))
    if found is not None:
        found.count += 1
        if len(data) < os.path.getsize(found.reproducer):  # keep the smallest reproducer
            os.unlink(found.reproducer)
            found.reproducer = _save(artifacts, target.name, kind, data)
        return
    stats.findings[(target.name, kind, key)] = Finding(target.name, kind, summary,
                                                        _save(artifacts, target.name, kind, data))


# ---------------------------------------------------------------------------------------------- atheris engine

def _atheris_child(args) -> None:
    """Runs inside the child: instrument udfs, build the seed corpus, hand over to libFuzzer (never returns)."""
    import atheris

    with atheris.instrument_imports(include=["udfs"]):
        import collector  # noqa: F401  (instrumented before anyone else imports udfs)
        from tests.fuzz.targets import TARGETS
    targets = _select(TARGETS, args.targets)
    corpus = Path(args.corpus_dir)
    for index, target in enumerate(targets):
        for n, seed in enumerate(target.seeds()):
            if len(seed) < args.max_len:
                (corpus / f"{target.name}-{n}").write_bytes(bytes([index]) + seed)

    def one_input(data: bytes) -> None:
        if not data:
            return
        target = targets[data[0] % len(targets)]
        try:
            target.run(data[1:])
        except target.allowed:
            pass

    argv = [sys.argv[0], f"-runs={args.executions}", f"-timeout={int(max(1, args.time_per_input))}",
            f"-rss_limit_mb={args.rss_limit_mb}", f"-max_len={args.max_len}", f"-seed={args.seed or 1}",
            f"-artifact_prefix={args.artifacts.rstrip('/')}/", "-print_final_stats=1", str(corpus)]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


_ECHO = re.compile(r"(Done \d+ runs|stat::|INFO: Seed|#\d+\s+(INITED|DONE|pulse))")
_CRASH_START = re.compile(r"(Uncaught Python exception|==\d+== ?ERROR|ALARM: working|out-of-memory)")


def run_atheris(args) -> Stats:
    stats = Stats("atheris")
    Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fuzz-corpus-") as corpus:
        cmd = [sys.executable, "-m", "tests.fuzz.run_fuzz", "--engine", "atheris-child", "--executions",
               str(args.executions), "--seed", str(args.seed), "--time-per-input", str(args.time_per_input),
               "--rss-limit-mb", str(args.rss_limit_mb), "--artifacts", str(args.artifacts), "--max-len",
               str(args.max_len), "--corpus-dir", corpus]
        if args.targets:
            cmd += ["--targets", args.targets]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, errors="replace")
        tail: List[str] = []
        crashed = False
        for line in proc.stderr:
            crashed = crashed or bool(_CRASH_START.search(line))
            if crashed or _ECHO.match(line):  # libFuzzer's per-unit and dictionary lines are too chatty
                sys.stderr.write(line)
            tail = (tail + [line])[-200:]
            m = re.match(r"#(\d+)\s", line)
            if m:
                stats.executions = max(stats.executions, int(m.group(1)))
            m = re.search(r"Done (\d+) runs in (\d+) second", line)
            if m:
                stats.executions = int(m.group(1))
            m = re.search(r"rss: (\d+)Mb", line)
            if m:
                stats.max_rss_mb = max(stats.max_rss_mb, float(m.group(1)))
        code = proc.wait()
        stats.seconds = time.monotonic() - start
    from tests.fuzz.targets import TARGETS

    stats.per_target = {t.name: 0 for t in _select(TARGETS, args.targets)}
    text = "".join(tail)
    if code != 0:
        kind = ("timeout" if "ALARM" in text or "timeout" in text.lower() else
                "memory" if "out-of-memory" in text or "rss limit" in text.lower() else "crash")
        artifact = re.findall(r"Test unit written to (\S+)", text)
        summary = next((ln.strip() for ln in tail if "Uncaught Python exception" in ln or "ERROR" in ln),
                       f"exit code {code}")
        stats.findings[("atheris", kind, summary)] = Finding("atheris", kind, summary,
                                                             artifact[-1] if artifact else "")
    return stats


# ---------------------------------------------------------------------------------------------- CLI

def _select(targets, names: Optional[str]):
    if not names:
        return list(targets)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    by_name = {t.name: t for t in targets}
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown fuzz target(s) {unknown}; known: {sorted(by_name)}")
    return [by_name[n] for n in wanted]


def replay(target_name: str, path: str) -> int:
    from tests.fuzz.targets import BY_NAME

    target = BY_NAME[target_name]
    data = Path(path).read_bytes()
    try:
        target.run(data)
    except target.allowed as exc:
        print(f"allowed {type(exc).__name__}: {exc}")
    print("no exception")
    return 0


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.run_fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--executions", type=int, default=100_000)
    p.add_argument("--engine", choices=("auto", "python", "atheris", "atheris-child"), default="auto")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--targets", help="comma-separated target names (default: all)")
    p.add_argument("--time-per-input", type=float, default=DEFAULT_TIME_PER_INPUT, help="seconds")
    p.add_argument("--rss-limit-mb", type=int, default=DEFAULT_RSS_LIMIT_MB)
    p.add_argument("--max-len", type=int, default=MAX_LEN)
    p.add_argument("--artifacts", default="fuzz-artifacts", help="where reproducers are written")
    p.add_argument("--corpus-dir", help=argparse.SUPPRESS)
    p.add_argument("--replay", metavar="FILE", help="run one saved input through --targets NAME")
    p.add_argument("--self-test", action="store_true", help="fuzz targets with planted bugs (python engine)")
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.replay:
        return replay(args.targets, args.replay)
    engine = args.engine
    if engine == "atheris-child":
        _atheris_child(args)
        return 0
    if engine == "auto":
        try:
            import atheris  # noqa: F401
            engine = "atheris"
        except ImportError:
            engine = "python"
    if args.self_test:
        from tests.fuzz.targets import SELF_TEST_TARGETS

        stats = run_python(list(SELF_TEST_TARGETS), args.executions, args.seed, args.time_per_input,
                           args.rss_limit_mb, Path(args.artifacts), args.max_len)
    elif engine == "atheris":
        stats = run_atheris(args)
    else:
        from tests.fuzz.targets import TARGETS

        stats = run_python(_select(TARGETS, args.targets), args.executions, args.seed, args.time_per_input,
                           args.rss_limit_mb, Path(args.artifacts), args.max_len)
    for finding in stats.findings.values():
        print(f"fuzz finding target={finding.target} kind={finding.kind} count={finding.count} "
              f"reproducer={finding.reproducer} {finding.summary}", flush=True)
    print(stats.line(), flush=True)
    return 0 if not stats.findings else 1


if __name__ == "__main__":
    sys.exit(main())
