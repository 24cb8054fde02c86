"""report.html and the Data Docs in real headless Chromium (Debian's `chromium`), with every DNS lookup failing:
the counts rendered after the page's script runs match the scenario, a hostile scenario runs nothing, and the
Data Docs are styled and scripted from local copies only.

Chromium: `apt-get update && apt-get install -y chromium` (`make chromium` does it).
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from jobs.quality import run_quality
from jobs.report import write_reports
from tests.settings_from import settings_from
from tests.table_rows import as_timestamp, frame

pytestmark = pytest.mark.spark

SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "report"
INSTALL = "apt-get update && apt-get install -y chromium"
WIDTH, HEIGHT = 1400, 2000


_ts, _frame = as_timestamp, frame


@pytest.fixture(scope="module")
def chromium():
    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if binary is None:
        message = f"headless Chromium is needed for the report browser tests: {INSTALL}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


def _write(spark, tmp_path_factory, name, with_dq):
    doc = json.loads((SCENARIOS / f"{name}_scenario.json").read_text())
    findings = _frame(spark, "gold_findings", doc["findings"])
    history = _frame(spark, "gold_run_summary", doc["history"])
    blocks = _frame(spark, "silver_producer_id_blocks", doc["pid_blocks"])
    out = tmp_path_factory.mktemp(f"browser-{name}")
    dq, settings = None, settings_from()
    if with_dq:
        summary_row = _frame(spark, "gold_run_summary", [doc["run_summary"]])
        dq = run_quality(spark, settings.quality, {"gold_findings": findings, "gold_run_summary": summary_row},
                         run_id=doc["run_summary"]["run_id"], capture_id=doc["run_summary"]["capture_id"],
                         docs_dir=out / "dq").summary
    return write_reports(spark, settings.report, settings.catalogue, out, findings, doc["run_summary"], history,
                         blocks, dq_summary=dq)


@pytest.fixture(scope="module")
def devsample(spark, tmp_path_factory):
    return _write(spark, tmp_path_factory, "devsample", with_dq=True)


@pytest.fixture(scope="module")
def hostile(spark, tmp_path_factory):
    return _write(spark, tmp_path_factory, "hostile", with_dq=False)


def _chromium(binary, tmp_path, url, *args, width=WIDTH, height=HEIGHT):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
           "--disable-extensions", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--window-size={width},{height}", *args, url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(binary, tmp_path, page: Path, fragment: str = "") -> "Dom":
    dom = Dom()
    dom.feed(_chromium(binary, tmp_path, page.resolve().as_uri() + fragment, "--dump-dom"))
    return dom


def screenshot(binary, tmp_path, page: Path, png: Path) -> "Png":
    _chromium(binary, tmp_path, page.resolve().as_uri(), f"--screenshot={png}")
    return Png(png.read_bytes())


def screenshot_at(binary, tmp_path, page: Path, png: Path, width: int) -> "Png":
    _chromium(binary, tmp_path, page.resolve().as_uri(), f"--screenshot={png}", width=width, height=900)
    return Png(png.read_bytes())


class Dom(HTMLParser):
    """The DOM Chromium serialized: elements with attributes and the text directly inside each id'd element."""

    def __init__(self):
        super().__init__()
        self.elements, self.text_by_id, self.script_text, self.all_text = [], {}, [], []
        self._stack = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        if tag not in ("meta", "input", "br", "link", "img", "rect", "line", "circle", "polyline"):
            self._stack.append((tag, attrs.get("id")))

    def handle_endtag(self, tag):
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        self.all_text.append(data)
        if self._stack and self._stack[-1][0] == "script":
            self.script_text.append(data)
        for _, ident in self._stack:
            if ident:
                self.text_by_id[ident] = self.text_by_id.get(ident, "") + data

    def by(self, tag=None, **attrs):
        return [a for t, a in self.elements if (tag is None or t == tag)
                and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def marks(self, chart_id):
        inside, out = False, []
        for tag, attrs in self.elements:
            if tag == "svg":
                inside = attrs.get("id") == chart_id
            elif inside and tag == "g" and "mark" in attrs.get("class", ""):
                out.append((attrs["data-label"], attrs["data-value"]))
        return out


class Png:
    """Just enough PNG decoding for Chromium screenshots (8-bit RGB/RGBA, not interlaced); only the first
    ``max_rows`` rows are unfiltered (pure Python: keep it to the part of the page a test looks at)."""

    def __init__(self, data: bytes, max_rows: int = 600):
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                self.width, self.height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
                assert depth == 8 and color in (2, 6) and interlace == 0
                self.channels = 3 if color == 2 else 4
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        raw, stride = zlib.decompress(idat), self.width * self.channels
        rows, prev = [], bytearray(stride)
        for y in range(min(self.height, max_rows)):
            kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - self.channels] if i >= self.channels else 0
                b, c = prev[i], prev[i - self.channels] if i >= self.channels else 0
                if kind == 1:
                    line[i] = (line[i] + a) & 255
                elif kind == 2:
                    line[i] = (line[i] + b) & 255
                elif kind == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(bytes(line))
            prev = line
        self.rows = rows

    def pixel(self, x, y):
        i = x * self.channels
        return tuple(self.rows[y][i:i + 3])

    def count(self, rgb, tolerance=12, step=2):
        """Pixels (sampled every ``step``) within ``tolerance`` of ``rgb``."""
        n = 0
        for y in range(0, len(self.rows), step):
            row = self.rows[y]
            for x in range(0, self.width, step):
                i = x * self.channels
                if all(abs(row[i + k] - rgb[k]) <= tolerance for k in range(3)):
                    n += 1
        return n


def test_counts_render_after_the_script_runs(chromium, devsample, tmp_path):
    dom = dump_dom(chromium, tmp_path, devsample.report_html)
    assert dom.by("html")[0].get("data-ready") == "1"  # the page's own script ran under its CSP
    assert dom.text_by_id["run-status"] == "FINDINGS" and dom.text_by_id["exit-code"] == "10"
    metrics = {a["data-metric"]: None for a in dom.by("span") if a.get("data-metric")}
    assert list(metrics) == ["open", "critical", "warning", "info", "new", "resolved", "bytes_reclaimable",
                             "files_seen", "files_ok", "files_quarantined", "dq_failed"]
    assert dom.marks("chart-severity") == [("critical", "2"), ("warning", "2"), ("info", "0")]
    assert dom.marks("chart-check") == [("CORRUPT_PARTITION_METADATA", "1"), ("MISSING_PARTITION_METADATA", "1"),
                                        ("STALE_TOPIC_ID", "1"), ("STRAY_DIR", "1")]
    assert dom.marks("chart-broker") == [("broker 102", "1"), ("broker 103", "1"), ("broker 104", "2")]
    assert dom.marks("chart-bytes") == [("broker 103", "4430"), ("broker 104", "4446")]
    assert dom.marks("chart-pid") == [("101", "0–999"), ("102", "1000–1999"), ("103", "2000–2999"),
                                      ("104", "3000–3999"), ("101", "4000–4999")]
    assert [v for _, v in dom.marks("chart-trend")] == ["0", "1", "3", "4"]
    rows = dom.by("tr")
    findings = [a for a in rows if "finding" in a.get("class", "")]
    assert len(findings) == 5 and not any("hidden" in a for a in findings)
    assert (dom.text_by_id["visible-count"], dom.text_by_id["row-count"], dom.text_by_id["total-count"]) == \
        ("5", "5", "5")
    assert [a["data-broker"] for a in dom.by("div") if a.get("id", "").startswith("plan-broker-")] == \
        ["102", "103", "104"]
    assert dom.text_by_id["dq-failed"] == "0"
    assert [a["href"] for a in dom.by("a") if a.get("href", "").startswith("dq/")] == ["dq/index.html"] * 2


def test_hash_preselects_filters(chromium, devsample, tmp_path):
    dom = dump_dom(chromium, tmp_path, devsample.report_html, "#severity=critical&broker=104")
    findings = [a for a in dom.by("tr") if "finding" in a.get("class", "")]
    shown = [a["data-check"] for a in findings if "hidden" not in a]
    assert shown == ["CORRUPT_PARTITION_METADATA"]
    assert dom.text_by_id["visible-count"] == "1"


def test_screenshot_shows_a_styled_report(chromium, devsample, tmp_path):
    png = screenshot(chromium, tmp_path, devsample.report_html, tmp_path / "report.png")
    assert (png.width, png.height) == (WIDTH, HEIGHT)
    assert png.count((0xC0, 0x39, 0x2B)) > 3000  # critical red: the FINDINGS banner and bars
    assert png.count((0xD6, 0x89, 0x10)) > 500   # warning amber bars
    assert png.count((0x1F, 0x2D, 0x3A)) > 5000  # header band


def test_hostile_strings_are_inert(chromium, hostile, tmp_path):
    dom = dump_dom(chromium, tmp_path, hostile.report_html)
    assert dom.by("html")[0].get("data-ready") == "1"
    tags = [t for t, _ in dom.elements]
    assert tags.count("script") == 1 and "img" not in tags and "iframe" not in tags
    script = "".join(dom.script_text)
    assert "PWNED" not in script and "alert" not in script
    assert [a for _, a in dom.elements if any(k.startswith("on") for k in a)] == []
    assert [a for _, a in dom.elements if a.get("id", "").startswith("pwn")] == []
    assert [a for _, a in dom.elements if "javascript:" in a.get("href", "")] == []
    assert [a.get("class") for t, a in dom.elements if t == "svg" and a.get("class") != "spark"] == ["chart"] * 6
    text = "".join(dom.all_text)
    for hostile_text in ("<img src=x onerror=alert(1)>", "<script>window.PWNED=1</script>",
                         '/data/captures/"><svg onload=alert(2)>/broker-103/kafka-logs',
                         "</pre><script>window.PWNED=4</script>", '<b id="pwn-cluster">EKJ41</b>'):
        assert hostile_text in text, hostile_text
    assert dom.text_by_id["visible-count"] == "5"


def test_data_docs_are_styled_and_scripted_offline(chromium, devsample, tmp_path):
    site = devsample.data_docs.parent
    page = next(p for p in site.glob("validations/**/*.html") if "gold_findings" in p.name)
    dom = dump_dom(chromium, tmp_path, page)
    # bootstrap-table (jQuery plugin) wrapped the result tables: jQuery and the plugin loaded from static/vendor
    assert any("bootstrap-table" in a.get("class", "").split() for _, a in dom.elements)
    assert not [a for _, a in dom.elements if (a.get("src") or "").startswith(("http:", "https:", "//"))]
    png = screenshot(chromium, tmp_path, page, tmp_path / "dq.png")
    assert png.count((0x00, 0x7B, 0xFF), tolerance=20) > 800  # Bootstrap's primary blue buttons: the CSS applied
    index = dump_dom(chromium, tmp_path, devsample.data_docs)
    assert any("bootstrap-table" in a.get("class", "").split() for _, a in index.elements)


# Layout checks run the page as Chromium lays it out, plus a probe script appended to a copy (the copy drops the
# page's CSP meta so the probe may run; the CSP does not change layout). The probe writes its result into an
# attribute of <html> that --dump-dom serializes.
OVERFLOW_PROBE = """
var w = window.innerWidth, wide = [];
Array.prototype.forEach.call(document.querySelectorAll("body *"), function (el) {
  var r = el.getBoundingClientRect();
  if (r.width > 0 && (r.right > w + 1 || r.left < -1)) {
    wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + "." + (el.getAttribute("class") || "")
              + ":" + Math.round(r.right));
  }
});
var msg = document.querySelector("#findings-table td.c-message"), rm = msg ? msg.getBoundingClientRect() : null;
document.documentElement.setAttribute("data-probe", JSON.stringify({
  viewport: w, scroll_width: document.documentElement.scrollWidth, too_wide: wide.slice(0, 20),
  message_visible: !!rm && rm.left >= 0 && rm.right <= w && rm.width >= 250}));
"""

CLICK_PROBE = """
var out = {};
[["chart-check", "STALE_TOPIC_ID"], ["chart-broker", "broker 104"], ["chart-severity", "warning"]].forEach(function (c) {
  var mark = document.querySelector("#" + c[0] + " g.mark[data-label='" + c[1] + "']");
  mark.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  out[c[0]] = document.getElementById("visible-count").textContent;
  mark.dispatchEvent(new MouseEvent("click", {bubbles: true}));  // the same bar again clears the filter
  out[c[0] + "-cleared"] = document.getElementById("visible-count").textContent;
});
document.documentElement.setAttribute("data-probe", JSON.stringify(out));
"""


def _probe(binary, tmp_path, page: Path, probe: str, width: int) -> dict:
    import re

    html = page.read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html, count=1)
    copy = page.with_name(f"probe-{width}-{abs(hash(probe))}.html")
    copy.write_text(html.replace("</body>", f"<script>{probe}</script></body>"), encoding="utf-8")
    dom = Dom()
    dom.feed(_chromium(binary, tmp_path, copy.resolve().as_uri(), "--dump-dom", width=width, height=900))
    return json.loads(dom.by("html")[0]["data-probe"])


@pytest.mark.parametrize("width", [1366, 1920])
def test_findings_fit_the_viewport_without_sideways_scrolling(chromium, devsample, hostile, tmp_path, width):
    for report in (devsample, hostile):  # hostile: long unbroken paths and ids
        probe = _probe(chromium, tmp_path, report.report_html, OVERFLOW_PROBE, width)
        assert probe["viewport"] == width
        assert probe["too_wide"] == [] and probe["scroll_width"] <= width, probe
        assert probe["message_visible"], probe
    # the screenshot agrees: right of main's padding only the page background (no content pushed past the edge)
    png = screenshot_at(chromium, tmp_path, devsample.report_html, tmp_path / f"report-{width}.png", width)
    assert png.width == width
    edge = [png.pixel(width - 8, y) for y in range(120, 600, 4)]
    assert sum(1 for p in edge if all(abs(a - b) <= 6 for a, b in zip(p, (0xF5, 0xF7, 0xF9), strict=True))) >= 0.9 * len(edge)


def test_chart_bars_filter_the_findings_table(chromium, devsample, tmp_path):
    probe = _probe(chromium, tmp_path, devsample.report_html, CLICK_PROBE, 1366)
    rows = [a for a in dump_dom(chromium, tmp_path, devsample.report_html).by("tr") if "finding" in a.get("class", "")]

    def count(attr, value):
        return str(sum(1 for a in rows if a.get(attr) == value))

    assert probe == {"chart-check": count("data-check", "STALE_TOPIC_ID"), "chart-check-cleared": "5",
                     "chart-broker": count("data-broker", "104"), "chart-broker-cleared": "5",
                     "chart-severity": count("data-severity", "warning"), "chart-severity-cleared": "5"}
    assert probe["chart-check"] == "1" and probe["chart-broker"] == "2" and probe["chart-severity"] == "3"


def test_check_ids_link_to_their_explanation_in_the_page(chromium, devsample, tmp_path):
    dom = dump_dom(chromium, tmp_path, devsample.report_html)
    links = {a["href"] for a in dom.by("a") if a.get("href", "").startswith("#check-")}
    targets = {"#" + a["id"] for a in dom.by("div") if a.get("id", "").startswith("check-")}
    in_table = {"#check-" + a["data-check"] for a in dom.by("tr") if "finding" in a.get("class", "")}
    assert links == targets == in_table
    assert "#check-ORPHAN_REPLICA" in in_table and len(in_table) == 5  # resolved rows are explained too
