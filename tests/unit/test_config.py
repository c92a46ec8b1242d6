"""Configuration precedence and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from phoned.daemon import config
from phoned.daemon.config import ConfigError

REPO = Path(__file__).resolve().parents[2]


def test_shipped_file_is_exactly_the_defaults() -> None:
    assert config.load(REPO / "config" / "phoned.yaml", environ={}) == config.load(environ={})


def test_every_key_is_documented_in_the_shipped_file() -> None:
    text = (REPO / "config" / "phoned.yaml").read_text()
    for name in config.Config.model_fields:
        assert f"\n{name}:" in text, name
    for name in config.Timeouts.model_fields:
        assert f"  {name}:" in text, name


def test_flag_beats_env_beats_file(tmp_path: Path) -> None:
    path = tmp_path / "phoned.yaml"
    path.write_text("poll_interval: 3\nlease_seconds: 30\ntimeouts:\n  approval: 100\n")
    env = {"PHONED_POLL_INTERVAL": "2", "PHONED_TIMEOUTS_APPROVAL": "50"}
    cfg = config.load(path, flags={"poll_interval": 1.5}, environ=env)
    assert cfg.poll_interval == 1.5
    assert cfg.lease_seconds == 30
    assert cfg.timeouts.approval == 50
    assert cfg.timeouts.dispatch == 300


# every key of every section the shipped file documents, as an operator would set it
SECTION_KEYS = [
    (section, key)
    for section, keys in yaml.safe_load((REPO / "config" / "phoned.yaml").read_text()).items()
    if isinstance(keys, dict)
    for key in keys
]


def test_the_file_documents_every_section_and_its_keys() -> None:
    sections = {name: model.model_fields.keys() for name, model in config._SECTIONS.items()}
    assert {(s, k) for s, keys in sections.items() for k in keys} == set(SECTION_KEYS)
    assert {s for s, _ in SECTION_KEYS} == {
        "timeouts", "retention", "approval", "schedules", "metrics",
    }  # fmt: skip


@pytest.mark.parametrize(("section", "key"), SECTION_KEYS)
def test_every_section_key_is_read_from_the_environment(section: str, key: str) -> None:
    name = f"PHONED_{section.upper()}_{key.upper()}"
    overrides = config._env_overrides({name: "7"})
    assert overrides == {section: {key: "7"}}, name


def test_the_schedules_grace_comes_from_the_environment() -> None:
    assert config.load(environ={"PHONED_SCHEDULES_GRACE": "300"}).schedules.grace == 300


def test_env_list_of_devices() -> None:
    cfg = config.load(environ={"PHONED_DEVICES": "A1,127.0.0.1:7401"})
    assert cfg.devices == ("A1", "127.0.0.1:7401")


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"PHONED_POLL_INTERVAL": "fast"}, "poll_interval"),
        ({"PHONED_ADB_PORT": "70000"}, "adb_port"),
        ({"PHONED_TIMEOUTS_DISPATCH": "-1"}, "timeouts.dispatch"),
        ({"PHONED_QUEUE": "mysql://x"}, "queue"),
        ({"PHONED_LOG_LEVEL": "LOUD"}, "log_level"),
    ],
)
def test_bad_value_names_the_key(env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(environ=env)
    assert info.value.key == key
    assert key in str(info.value)


def test_unknown_key_in_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "phoned.yaml"
    path.write_text("pol_interval: 3\n")
    with pytest.raises(ConfigError, match="pol_interval"):
        config.load(path, environ={})


def test_default_queue_lives_in_the_state_dir(tmp_path: Path) -> None:
    cfg = config.load(flags={"state_dir": str(tmp_path)}, environ={})
    assert cfg.queue_url == f"sqlite:///{tmp_path}/queue.db"
    first = cfg.stable_daemon_id()
    assert first == cfg.stable_daemon_id()
    assert (tmp_path / "daemon-id").read_text().strip() == first


def test_task_timeouts_default_from_the_config_unless_given() -> None:
    from phoned.daemon.lifecycle.contract import validate_task

    cfg = config.load(
        environ={"PHONED_TIMEOUTS_APPROVAL": "120", "PHONED_TIMEOUTS_PERMISSION": "30"}
    )
    plain = config.with_default_timeouts(
        validate_task({"method": "dnd.get", "params": {}, "conversation_id": "c"}), cfg
    )
    assert (plain.timeouts.approval_ttl_s, plain.timeouts.permission_ttl_s) == (120, 30)
    assert plain.timeouts.dispatch_s == 300
    given = config.with_default_timeouts(
        validate_task(
            {
                "method": "dnd.get",
                "params": {},
                "conversation_id": "c",
                "timeouts": {"approval_ttl_s": 5},
            }
        ),
        cfg,
    )
    assert given.timeouts.approval_ttl_s == 5
