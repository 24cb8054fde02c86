"""Make a Great Expectations Data Docs site work with no network (dashboards are often air-gapped).

GX 1.x pages load Bootstrap, bootstrap-table, jQuery, Popper, bootstrap-datepicker, bootstrap-dark,
Font Awesome and Vega from CDNs, and the navbar logo from S3 (with a per-render query string). This module
copies local copies of those files (``static/vendor/``, taken unchanged from their npm packages; versions and
licences in ``static/vendor/README.md``) into the site's ``static/vendor/`` folder and rewrites every page:

- a CDN ``<script>``/``<link>`` whose library we ship points to the local copy, relative to the page, with
  ``integrity``/``crossorigin`` removed (Chromium blocks ``crossorigin`` loads from file:// pages);
- the S3 logo becomes GX's own ``static/images/logo-long.png`` (GX copies it into every site);
- relative ``static/`` references are re-based on the page's real depth (GX computes some of them wrong);
- anything else that would load from the network (Vega, used only by the KL-divergence renderer, or a CDN
  file a future GX adds) is removed and listed in the result, so a page never reaches out.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import List, Optional, Tuple

# importlib.resources: the driver may run from a zip (spark-submit --py-files) as well as a wheel or the tree
VENDOR_DIR = resources.files("jobs.quality").joinpath("static", "vendor")

# (pattern on the CDN URL, file under static/vendor/); first match wins.
CDN_MAP: Tuple[Tuple[str, str], ...] = (
    (r"bootstrap-table@[\d.]+/dist/extensions/filter-control/bootstrap-table-filter-control(\.min)?\.css$",
     "bootstrap-table-1.19.1/extensions/filter-control/bootstrap-table-filter-control.min.css"),
    (r"bootstrap-table@[\d.]+/dist/extensions/filter-control/bootstrap-table-filter-control(\.min)?\.js$",
     "bootstrap-table-1.19.1/extensions/filter-control/bootstrap-table-filter-control.min.js"),
    (r"bootstrap-table@[\d.]+/dist/bootstrap-table(\.min)?\.css$", "bootstrap-table-1.19.1/bootstrap-table.min.css"),
    (r"bootstrap-table@[\d.]+/dist/bootstrap-table(\.min)?\.js$", "bootstrap-table-1.19.1/bootstrap-table.min.js"),
    (r"bootstrap-dark@[\d.]+/dist/css/bootstrap-prefers-dark(\.min)?\.css$",
     "bootstrap-dark-1.1.0/bootstrap-prefers-dark.min.css"),
    (r"bootstrap-datepicker/[\d.]+/css/bootstrap-datepicker(\.min)?\.css$",
     "bootstrap-datepicker-1.9.0/bootstrap-datepicker.min.css"),
    (r"bootstrap-datepicker/[\d.]+/js/bootstrap-datepicker(\.min)?\.js$",
     "bootstrap-datepicker-1.9.0/bootstrap-datepicker.min.js"),
    (r"/bootstrap/4\.[\d.]+/css/bootstrap(\.min)?\.css$", "bootstrap-4.3.1/bootstrap.min.css"),
    (r"/bootstrap/4\.[\d.]+/js/bootstrap(\.min)?\.js$", "bootstrap-4.3.1/bootstrap.min.js"),
    (r"font-awesome/6\.[\d.]+/css/all(\.min)?\.css$", "fontawesome-free-6.6.0/css/all.min.css"),
    (r"jquery-3\.[\d.]+(\.min)?\.js$", "jquery-3.7.1/jquery.min.js"),
    (r"popper\.js/1\.[\d.]+/umd/popper(\.min)?\.js$", "popper.js-1.12.9/popper.min.js"),
)
GX_LOGO = "static/images/logo-long.png"

_EXTERNAL = re.compile(r"^(https?:)?//", re.I)
_TAG = re.compile(r"<(script|link|img)\b([^>]*)>(\s*</script>)?", re.I | re.S)
_ATTR = re.compile(r"""\s(src|href)\s*=\s*(["'])(.*?)\2""", re.I | re.S)
_EXTERNAL_ANCHOR = re.compile(r"""(<a\b[^>]*?)\s+href\s*=\s*(["'])(?:https?:)?//[^"']*\2""", re.I)
_CSS_URL = re.compile(r"""url\(\s*(["']?)(https?://[^)'"]*)\1\s*\)""", re.I)
_DROP_ATTRS = re.compile(r"""\s(integrity|crossorigin)(\s*=\s*(["']).*?\3)?""", re.I | re.S)
_STATIC_REL = re.compile(r"^(\./|(\.\./)+)?static/")


@dataclass
class OfflineResult:
    pages: int = 0
    rewritten: int = 0
    removed: List[str] = field(default_factory=list)  # external URLs dropped because nothing local matches
    unlinked: int = 0  # external <a href> links made plain text (GX's site and newsletter links)


def local_for(url: str) -> Optional[str]:
    """The vendored file (under static/vendor/) that replaces a CDN ``url``, or None."""
    clean = url.split("?", 1)[0].split("#", 1)[0]
    for pattern, local in CDN_MAP:
        if re.search(pattern, clean):
            return "static/vendor/" + local
    if "great-expectations-web-assets" in clean and clean.endswith((".png", ".svg")):
        return GX_LOGO
    return None


def copy_vendor(site_dir: Path) -> None:
    target = site_dir / "static" / "vendor"
    if target.exists():
        shutil.rmtree(target)
    _copy_tree(VENDOR_DIR, target)


def _copy_tree(source, target: Path) -> None:
    """``shutil.copytree`` for an importlib.resources Traversable (a folder inside a zip has no file path)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if entry.is_dir():
            _copy_tree(entry, target / entry.name)
        else:
            (target / entry.name).write_bytes(entry.read_bytes())


def rewrite_page(text: str, prefix: str, result: OfflineResult) -> str:
    """Rewrite one page; ``prefix`` is the relative path from the page to the site root ('' or '../..')."""

    def rebase(local: str) -> str:
        return f"{prefix}/{local}" if prefix else local

    def fix_tag(match: "re.Match[str]") -> str:
        tag, attrs, closing = match.group(1).lower(), match.group(2), match.group(3) or ""
        found = _ATTR.search(attrs)
        if not found:
            return match.group(0)
        url = found.group(3)
        if tag == "link" and "stylesheet" not in attrs.lower() and "icon" not in attrs.lower():
            return match.group(0)  # other <link> kinds (none in GX pages) are navigation hints, not loads
        if _EXTERNAL.match(url):
            local = local_for(url)
            if local is None:
                result.removed.append(url)
                return ""
            result.rewritten += 1
            new_attrs = attrs[: found.start(3)] + rebase(local) + attrs[found.end(3):]
            new_attrs = _DROP_ATTRS.sub("", new_attrs)
            return f"<{match.group(1)}{new_attrs}>{closing}"
        rel = _STATIC_REL.match(url)
        if rel:
            fixed = rebase("static/" + url[rel.end():])
            return f"<{match.group(1)}{attrs[: found.start(3)]}{fixed}{attrs[found.end(3):]}>{closing}"
        return match.group(0)

    def fix_css_url(match: "re.Match[str]") -> str:
        local = local_for(match.group(2))
        if local is None:
            result.removed.append(match.group(2))
            return "none"
        result.rewritten += 1
        return f"url('{rebase(local)}')"

    def unlink(match: "re.Match[str]") -> str:
        result.unlinked += 1
        return match.group(1)

    text = _TAG.sub(fix_tag, text)
    text = _EXTERNAL_ANCHOR.sub(unlink, text)
    return _CSS_URL.sub(fix_css_url, text)


def make_offline(site_dir: Path) -> OfflineResult:
    """Vendor the assets into ``site_dir`` and rewrite every ``*.html`` under it in place."""
    site_dir = Path(site_dir)
    copy_vendor(site_dir)
    result = OfflineResult()
    for page in sorted(site_dir.rglob("*.html")):
        if (site_dir / "static") in page.parents:
            continue
        depth = len(page.relative_to(site_dir).parts) - 1
        prefix = os.path.join(*([".."] * depth)) if depth else ""
        text = page.read_text(encoding="utf-8")
        page.write_text(rewrite_page(text, prefix, result), encoding="utf-8")
        result.pages += 1
    return result
