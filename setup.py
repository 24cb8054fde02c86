"""The one build step pyproject.toml cannot declare: conf/*.yaml (its one source, edited in conf/) is copied into the
built package as jobs/conf/*.yaml, so an installed wheel finds its defaults (jobs.config.default_conf_dir)."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithConf(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib, "jobs", "conf")
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(Path("conf").glob("*.yaml")):
            self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": BuildPyWithConf})
