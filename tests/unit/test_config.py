"""Configuration precedence and typing: defaults < --conf < env < --set, unknown keys and bad types rejected."""
import pytest

from jobs.config import ConfigError, load_config


def test_defaults_load_and_expose_attribute_access():
    cfg = load_config(env={})
    assert cfg.spark.master == "local[*]"
    assert cfg.storage.backend == "auto"
    assert isinstance(cfg.ingest.files_per_task, int)


def test_precedence_file_then_env_then_set(tmp_path):
    user = tmp_path / "site.yaml"
    user.write_text("storage:\n  root: /from/file\nspark:\n  shuffle_partitions: 3\n")
    cfg = load_config(str(user), env={"KAFKA_RECON__STORAGE__ROOT": "/from/env"})
    assert cfg.storage.root == "/from/env"
    assert cfg.spark.shuffle_partitions == 3
    cfg = load_config(str(user), overrides=["storage.root=/from/set"], env={"KAFKA_RECON__STORAGE__ROOT": "/e"})
    assert cfg.storage.root == "/from/set"


def test_env_values_are_coerced_to_the_default_type():
    cfg = load_config(env={"KAFKA_RECON__SPARK__SHUFFLE_PARTITIONS": "16"})
    assert cfg.spark.shuffle_partitions == 16


def test_unknown_key_is_rejected_with_its_name(tmp_path):
    user = tmp_path / "bad.yaml"
    user.write_text("storage:\n  rooot: /x\n")
    with pytest.raises(ConfigError, match="rooot"):
        load_config(str(user), env={})


def test_wrong_type_is_rejected():
    with pytest.raises(ConfigError, match="spark.shuffle_partitions: expected an integer"):
        load_config(overrides=["spark.shuffle_partitions=many"], env={})


def test_a_fraction_for_an_integer_key_is_rejected_not_truncated(tmp_path):
    with pytest.raises(ConfigError, match="storage.write_parallelism: expected an integer, got 2.5"):
        load_config(overrides=["storage.write_parallelism=2.5"], env={})
    user = tmp_path / "site.yaml"
    user.write_text("spark:\n  shuffle_partitions: 0.5\n")
    with pytest.raises(ConfigError, match="spark.shuffle_partitions: expected an integer, got 0.5"):
        load_config(str(user), env={})
    assert load_config(overrides=["storage.write_parallelism=2.0"], env={}).storage.write_parallelism == 2


def test_a_number_key_keeps_its_fraction():
    assert load_config(overrides=["storage.staging_max_age_hours=0.0001"], env={}).storage.staging_max_age_hours == 0.0001
    assert load_config(overrides=["storage.staging_max_age_hours=6"], env={}).storage.staging_max_age_hours == 6.0


def test_free_form_spark_conf_accepts_new_keys():
    cfg = load_config(overrides=["spark.extra_conf.spark.executor.memory=4g"], env={})
    assert cfg.spark.extra_conf == {"spark.executor.memory": "4g"}


def test_free_form_spark_conf_takes_new_keys_from_every_source(tmp_path):
    """A second key used to be refused once the map held one (it was told free-form by being empty)."""
    conf = tmp_path / "mine.yaml"
    conf.write_text("spark:\n  extra_conf:\n    spark.executor.cores: '2'\n")
    cfg = load_config(str(conf), overrides=["spark.extra_conf.spark.eventLog.enabled=true",
                                            "spark.extra_conf.spark.eventLog.dir=file:///tmp/events"],
                      env={"KAFKA_RECON__SPARK__EXTRA_CONF__SPARK.EXECUTOR.MEMORY": "4g"})
    assert cfg.spark.extra_conf == {"spark.executor.cores": "2", "spark.executor.memory": "4g",
                                    "spark.eventLog.enabled": True, "spark.eventLog.dir": "file:///tmp/events"}
    with pytest.raises(ConfigError, match="spark.extra_confs"):
        load_config(overrides=["spark.extra_confs.x=1"], env={})


@pytest.mark.parametrize("override", ["spark.extra_conf.=1", ".spark.master=x", "=1"])
def test_an_empty_key_name_is_a_config_error(override):
    with pytest.raises(ConfigError, match=r"an empty key name"):
        load_config(overrides=[override], env={})


@pytest.mark.parametrize("override", ["spark=1", "storage=x", "spark.extra_conf=x", "spark.extra_conf=[1]"])
def test_a_section_given_a_value_is_a_config_error(override):
    """`--set spark=1` crashed with a TypeError (exit 1 and no hint which key)."""
    with pytest.raises(ConfigError, match=r"is a section; set its keys"):
        load_config(overrides=[override], env={})


def test_an_empty_section_in_a_conf_file_changes_nothing(tmp_path):
    conf = tmp_path / "mine.yaml"
    conf.write_text("spark:\n  # master: local[4]\nstorage:\n  root: /data/recon\n")
    cfg = load_config(str(conf), env={})
    assert cfg.spark.master == load_config(env={}).spark.master and cfg.storage.root == "/data/recon"


def test_every_key_the_value_checks_name_is_a_shipped_key_of_the_right_type():
    """ENUMS, MINIMUM and NON_EMPTY are keyed by dotted names: a typo there would silently check nothing."""
    from jobs.config import ENUMS, MINIMUM, NON_EMPTY

    defaults = load_config(env={})

    def shipped(dotted):
        section, key = dotted.split(".", 1)
        assert key in defaults[section], dotted
        return defaults[section][key]

    assert all(isinstance(shipped(k), (int, float)) and not isinstance(shipped(k), bool) for k in MINIMUM)
    assert all(shipped(k) >= low for k, low in MINIMUM.items())  # the shipped values pass their own bound
    assert all(isinstance(shipped(k), str) and shipped(k).strip() for k in NON_EMPTY)
    assert all(shipped(k) in allowed for k, allowed in ENUMS.items())
