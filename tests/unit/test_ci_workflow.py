"""The emulator CI workflow and the shell scripts, checked without an emulator.

No emulator boots on our machines, so ``.github/workflows/emulator.yml`` is checked by
parsing it against the inputs reactivecircus/android-emulator-runner@v2 documents (its
README "Configurations" table and action.yml), and the scripts with ``bash -n`` and, when
installed, shellcheck. The task table in ``scripts/ci-emulator.sh`` is checked against the
v1 method schemas, so a renamed method or parameter fails here rather than on CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from phoned.daemon.lifecycle.approval_policy import asks_by_default
from phoned.device.actions.registry import APPROVAL_METHODS, METHOD_PARAMS, REGISTRY

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "emulator.yml"
CI_SCRIPT = ROOT / "scripts" / "ci-emulator.sh"
INSTALL_SCRIPT = ROOT / "scripts" / "install.sh"
RUNNER = "reactivecircus/android-emulator-runner@v2"

# Inputs of android-emulator-runner v2 (README "Configurations" and action.yml,
# https://github.com/ReactiveCircus/android-emulator-runner).
RUNNER_INPUTS = {
    "api-level", "target", "arch", "profile", "cores", "ram-size", "heap-size",
    "sdcard-path-or-size", "disk-size", "avd-name", "force-avd-creation",
    "emulator-boot-timeout", "emulator-port", "emulator-options", "disable-animations",
    "disable-spellchecker", "disable-linux-hw-accel", "enable-hw-keyboard", "emulator-build",
    "working-directory", "ndk", "cmake", "channel", "script", "pre-emulator-launch-script",
}  # fmt: skip
EMULATOR_OPTIONS = {"-no-window", "-gpu", "swiftshader_indirect", "-noaudio", "-no-boot-anim"}
KVM_RULE = 'KERNEL=="kvm", GROUP="kvm", MODE="0666", OPTIONS+="static_node=kvm"'


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def job(workflow: dict[Any, Any]) -> dict[str, Any]:
    jobs = workflow["jobs"]
    assert list(jobs) == ["device"]
    return dict(jobs["device"])


def runner_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in job["steps"] if step.get("uses") == RUNNER]


def test_workflow_triggers(workflow: dict[Any, Any]) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads `on` as True
    assert isinstance(triggers, dict)
    assert {"push", "pull_request", "workflow_dispatch"} <= set(triggers)


def test_matrix_is_api_30_and_34(job: dict[str, Any]) -> None:
    assert job["runs-on"] == "ubuntu-latest"
    assert job["strategy"]["matrix"]["api-level"] == [30, 34]
    assert job["strategy"]["fail-fast"] is False
    assert job["env"]["ANDROID_SERIAL"] == "emulator-5554"


def test_kvm_is_enabled_before_the_emulator_starts(job: dict[str, Any]) -> None:
    steps = job["steps"]
    kvm = next(i for i, s in enumerate(steps) if KVM_RULE in s.get("run", ""))
    assert "udevadm trigger --name-match=kvm" in steps[kvm]["run"]
    first_runner = next(i for i, s in enumerate(steps) if s.get("uses") == RUNNER)
    assert kvm < first_runner


def test_avd_cache_feeds_the_snapshot_step(job: dict[str, Any]) -> None:
    cache = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache@"))
    assert "~/.android/avd/*" in cache["with"]["path"]
    assert "${{ matrix.api-level }}" in cache["with"]["key"]
    create, run = runner_steps(job)
    assert create["if"] == f"steps.{cache['id']}.outputs.cache-hit != 'true'"
    assert "-no-snapshot-save" in run["with"]["emulator-options"].split()


def test_runner_inputs_are_documented_and_complete(job: dict[str, Any]) -> None:
    steps = runner_steps(job)
    assert len(steps) == 2
    for step in steps:
        inputs = step["with"]
        assert set(inputs) <= RUNNER_INPUTS, set(inputs) - RUNNER_INPUTS
        assert inputs["api-level"] == "${{ matrix.api-level }}"
        assert inputs["arch"] == "x86_64"
        assert inputs["target"] == "google_apis"
        assert inputs["force-avd-creation"] is False
        options = inputs["emulator-options"].split()
        assert set(options) >= EMULATOR_OPTIONS
        assert options[options.index("-camera-back") + 1] == "none"


def test_tests_run_the_ci_script_with_animations_off(job: dict[str, Any]) -> None:
    run = runner_steps(job)[-1]["with"]
    assert run["disable-animations"] is True
    assert run["script"] == "scripts/ci-emulator.sh"  # one line: the action runs each line alone
    assert (ROOT / run["script"]).is_file()
    assert os.access(ROOT / run["script"], os.X_OK)


@pytest.mark.parametrize("script", [CI_SCRIPT, INSTALL_SCRIPT], ids=lambda p: p.name)
def test_script_parses_and_is_executable(script: Path) -> None:
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert os.access(script, os.X_OK)
    assert "set -euo pipefail" in script.read_text()


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
@pytest.mark.parametrize("script", [CI_SCRIPT, INSTALL_SCRIPT], ids=lambda p: p.name)
def test_shellcheck_is_clean(script: Path) -> None:
    proc = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def ci_cases() -> list[tuple[str, dict[str, Any], int]]:
    """The (method, params, expected exit code) table of ci-emulator.sh."""
    text = CI_SCRIPT.read_text()
    block = re.search(r"^CASES=\(\n(.*?)^\)", text, re.S | re.M)
    assert block is not None
    sms_to = re.search(r"^SMS_TO=(\S+)", text, re.M)
    assert sms_to is not None
    cases = []
    for line in block.group(1).splitlines():
        entry = line.strip()[1:-1].replace('\\"', '"').replace("$SMS_TO", sms_to.group(1))
        method, params, expected = entry.split("|")
        cases.append((method, json.loads(params), int(expected)))
    return cases


def test_ci_runs_one_valid_task_per_v1_method() -> None:
    cases = ci_cases()
    listed = sorted(method for method, _, _ in cases)
    missing = sorted(set(METHOD_PARAMS) - set(listed))
    assert not missing, (
        f"scripts/ci-emulator.sh CASES has no row for {missing}: add 'METHOD|PARAMS|EXIT'"
    )
    assert listed == sorted(METHOD_PARAMS), "scripts/ci-emulator.sh CASES: unknown or repeated rows"
    for method, params, _ in cases:
        METHOD_PARAMS[method].model_validate(params)  # raises on a bad parameter


def test_ci_expects_approval_methods_to_pause_and_the_rest_to_complete() -> None:
    """sms.send and the UI tier's changing steps ask under the default policy: they pause."""
    pausing = {m for m in METHOD_PARAMS if asks_by_default(REGISTRY[m])}
    assert pausing >= APPROVAL_METHODS and {"ui.tap", "ui.type", "ui.key"} <= pausing
    for method, _, expected in ci_cases():
        assert expected == (4 if method in pausing else 0), method
