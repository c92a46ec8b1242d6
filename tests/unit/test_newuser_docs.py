"""The set-up text and packaging a new user meets: no licence-table deprecation warning on
install, no references to a SPEC that is not in the repository, the DND words as the
parameter takes them, and what the test command installs as root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[2]


def test_license_is_an_spdx_string_with_a_setuptools_that_reads_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"  # a table warns on every install
    (requirement,) = project["build-system"]["requires"]
    minimum = re.fullmatch(r"setuptools>=(\d+)", requirement)
    assert minimum and int(minimum.group(1)) >= 77  # PEP 639 license strings: setuptools 77


def test_docs_cite_no_spec_section_the_repository_lacks() -> None:
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text()
        assert not re.search(r"SPEC (§|section)", text), path.name


def test_actions_doc_names_the_dnd_parameter_total_silence() -> None:
    row = next(line for line in (REPO / "docs/actions.md").read_text().splitlines()
               if line.startswith("| dnd.get"))  # fmt: skip
    assert "`total_silence`" in row and "`none`" in row  # the parameter, and Android's word


def test_readme_says_what_the_test_command_installs_as_root() -> None:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    for needle in ("postgresql", "chromium", "apt-get", "root", "skipped"):
        assert needle in setup, needle
