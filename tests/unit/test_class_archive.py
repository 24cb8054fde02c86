"""The class archive's name, where it lives and when a session is offered it (jobs/engine/class_archive.py), Spark-free."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.config import ConfigError
from jobs.engine import class_archive
from jobs.engine.class_archive import archive_dir, archive_key, archive_options
from jobs.engine.class_archive_build import dump_flags, main
from jobs.settings import Settings
from tests.settings_from import settings_from

VERSION = 'openjdk version "17.0.15" 2025-04-15'


@pytest.fixture
def install(tmp_path, monkeypatch):
    """A fake JDK and Spark installation: java binary and a jars folder."""
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_bytes(b"\x7fELF java")
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    for name in ("spark-core_2.13-4.2.0.jar", "scala-library-2.13.18.jar"):
        (jars / name).write_bytes(b"PK" + name.encode())
    monkeypatch.setattr(class_archive, "java_binary", lambda: str(java))
    monkeypatch.setattr(class_archive, "spark_jars_dir", lambda: str(jars))
    return java, jars


def test_the_key_changes_with_the_jdk_and_with_any_jar_and_only_then(install):
    java, jars = install
    key = archive_key(str(java), VERSION, str(jars))
    assert key == archive_key(str(java), VERSION, str(jars))
    assert key != archive_key(str(java), 'openjdk version "17.0.16" 2025-07-15', str(jars))
    (jars / "not-a-jar.txt").write_text("ignored")
    assert key == archive_key(str(java), VERSION, str(jars))
    jar = jars / "spark-core_2.13-4.2.0.jar"
    st = jar.stat()
    os.utime(jar, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same bytes, replaced later
    touched = archive_key(str(java), VERSION, str(jars))
    assert touched != key
    jar.write_bytes(jar.read_bytes() + b"!")  # another build of the jar
    assert archive_key(str(java), VERSION, str(jars)) not in (key, touched)
    (jars / "delta-spark_2.13-4.4.1.jar").write_bytes(b"PK")  # a jar added to the class path
    added = archive_key(str(java), VERSION, str(jars))
    java.write_bytes(b"\x7fELF another java")
    assert archive_key(str(java), VERSION, str(jars)) != added


def test_a_session_is_offered_the_archive_only_when_it_was_built_for_this_jdk_and_these_jars(install, tmp_path):
    spark = settings_from(spark={"class_archive_dir": str(tmp_path / "cache")}).spark
    assert archive_options(spark, VERSION)[:2] == ("", None)  # not built yet
    path = class_archive.archive_path(spark, VERSION)
    assert path.parent == tmp_path / "cache" and path.name.startswith("spark-classes-") and path.suffix == ".jsa"
    path.parent.mkdir()
    path.write_bytes(b"archive")
    flags, offered, _ = archive_options(spark, VERSION, environ={})
    assert offered == path
    assert flags.split() == [f"-XX:SharedArchiveFile={path}", "-Xshare:auto"]
    assert archive_options(spark, 'openjdk version "21.0.5"')[:2] == ("", None)  # another JDK: another name
    off = settings_from(spark={"class_archive_dir": str(tmp_path / "cache"), "class_archive": False}).spark
    assert archive_options(off, VERSION)[:2] == ("", None)


def test_without_java_or_spark_there_is_no_archive(monkeypatch, tmp_path):
    spark = settings_from(spark={"class_archive_dir": str(tmp_path)}).spark
    monkeypatch.setattr(class_archive, "spark_jars_dir", lambda: None)
    assert class_archive.archive_path(spark, VERSION) is None
    assert archive_options(spark, VERSION)[:2] == ("", None)


def test_the_archive_lives_in_the_users_cache_unless_configured(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert archive_dir(Settings.shipped().spark) == tmp_path / "xdg" / "kafka-recon"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert archive_dir(Settings.shipped().spark) == tmp_path / "home" / ".cache" / "kafka-recon"
    assert archive_dir(settings_from(spark={"class_archive_dir": "~/jsa"}).spark) == tmp_path / "home" / "jsa"


def test_the_dump_repeats_the_flags_an_archive_must_agree_with():
    training = ["-Xmx6g", "-Duser.timezone=UTC", "-XX:+UseParallelGC", "-XX:ReservedCodeCacheSize=512m",
                "-XX:TieredStopAtLevel=1", "-XX:DumpLoadedClassList=/tmp/x/classes.lst",
                "-XX:+IgnoreUnrecognizedVMOptions", "--add-modules=jdk.incubator.vector",
                "--add-opens=java.base/java.lang=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
                "-XX:SharedArchiveFile=/old.jsa", "-Dio.netty.allocator.type=pooled"]
    assert dump_flags(training) == ["-Xmx6g", "-XX:+UseParallelGC", "-XX:+IgnoreUnrecognizedVMOptions",
                                    "--add-modules=jdk.incubator.vector",
                                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                                    "--enable-native-access=ALL-UNNAMED"]


def test_a_mode_other_than_true_or_false_is_a_configuration_error():
    assert Settings.load(overrides=["spark.class_archive=false"]).spark.class_archive is False
    with pytest.raises(ConfigError, match="spark.class_archive: expected true/false"):
        Settings.load(overrides=["spark.class_archive=always"])


def test_the_command_says_in_one_line_what_is_wrong_before_starting_spark(tmp_path, capsys, caplog):
    assert main(["--capture", str(tmp_path / "missing")]) == 2
    assert main(["--set", "spark.class_archive=sometimes"]) == 2
    assert main(["--no-such-flag"]) == 2
    err = capsys.readouterr().err + caplog.text
    assert "no such file or folder" in err and "expected true/false" in err
    assert "Traceback" not in err
    assert not list(Path(tmp_path).iterdir())


@pytest.mark.parametrize("options, environ, hook", [
    ("-XX:+UseParallelGC -XX:TieredStopAtLevel=1", {}, None),
    ("-XX:+UseParallelGC -javaagent:/opt/otel/opentelemetry-javaagent.jar", {}, "-javaagent:"),
    ("-XX:StartFlightRecording=filename=rec.jfr,settings=profile", {}, "-XX:StartFlightRecording"),
    ("-XX:StartFlightRecording:filename=rec.jfr", {}, "-XX:StartFlightRecording"),
    ("-XX:+FlightRecorder", {}, "-XX:+FlightRecorder"),
    ("-Xmx2g", {"JAVA_TOOL_OPTIONS": "-agentpath:/opt/dd/libdd.so=opt"}, "-agentpath:"),
    ("", {"JDK_JAVA_OPTIONS": "-agentlib:jdwp=transport=dt_socket"}, "-agentlib:"),
    ("", {"_JAVA_OPTIONS": "-Dfoo=-javaagent:x.jar"}, None),  # a property's value is not an option
])
def test_an_agent_or_flight_recorder_in_the_jvms_options_keeps_the_archive_off(install, tmp_path, options, environ,
                                                                                  hook):
    found = class_archive.class_file_hook(options, environ)
    assert (found is None) if hook is None else found.startswith(hook)
    spark = settings_from(spark={"class_archive_dir": str(tmp_path / "cache")}).spark
    path = class_archive.archive_path(spark, VERSION)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    choice = archive_options(spark, VERSION, options, environ)
    if hook is None:
        assert choice.path == path and f"-XX:SharedArchiveFile={path}" in choice.flags
    else:
        assert (choice.flags, choice.path) == ("", None)
        assert hook.rstrip(":") in choice.reason and "agent or Flight Recorder" in choice.reason


def test_driver_options_of_the_users_own_replace_the_archives(install, tmp_path):
    spark = settings_from(spark={"class_archive_dir": str(tmp_path / "cache")}).spark
    path = class_archive.archive_path(spark, VERSION)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    choice = archive_options(spark, VERSION, "-Xss4m", {}, replaced=True)
    assert (choice.flags, choice.path) == ("", None) and "spark.driver.extraJavaOptions" in choice.reason
