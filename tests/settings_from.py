"""Test helper: typed settings (jobs.settings.Settings) in one call, as an entry point builds them."""
from __future__ import annotations

from jobs.config import load_config
from jobs.settings import Settings


def settings_from(*sets: str, **sections: dict) -> Settings:
    """The shipped conf/*.yaml (no environment) with ``--set`` style ``sets`` (``"storage.root=/t"``), then
    ``sections`` given in part (``spark={"interpreted_below_rows": 0}``: the section's other keys stay)."""
    cfg = load_config(env={}, overrides=sets)
    for name, values in sections.items():
        cfg[name] = {**cfg.get(name, {}), **values}
    return Settings.from_config(cfg)
