"""A resume check that fails keeps its reads: the real daemon, a real SQLite queue that
refuses the check's document (as a full disk would), a simulated phone.

The resumed attempt reads the phone for a fresh snapshot before it compares it with the
pause snapshot. When the check cannot keep its ``resume_check`` document, the attempt ends
(``runtime_offline``: the queue failed, the phone did not), and its ``failure`` document
must hold the snapshot's commands, never "no command ran on the phone".
"""

from __future__ import annotations

import sqlite3

import pytest
from phoned_process import Daemon

from phoned.daemon.lifecycle.states import FailureReason, TaskState

pytestmark = pytest.mark.integration

REFUSE_RESUME_CHECK = """
CREATE TRIGGER refuse_resume_check BEFORE INSERT ON evidence
WHEN NEW.kind = 'resume_check'
BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END
"""


def test_a_failed_resume_check_keeps_the_commands_it_ran(daemon: Daemon, sim_factory) -> None:
    sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit(
        {"method": "sms.send", "params": {"to": "+15551234567", "body": "Running late"}}
    )
    paused = daemon.state(task_id, TaskState.APPROVAL)
    with sqlite3.connect(daemon.queue) as db:
        db.execute(REFUSE_RESUME_CHECK)
    daemon.approve(paused)
    task = daemon.wait_for(task_id, lambda t: t.failure is not None, timeout=45)
    assert task.failure is not None
    assert task.failure.reason is FailureReason.RUNTIME_OFFLINE, task.failure
    assert daemon.evidence(task_id, "resume_check") == []
    (failed,) = [d for d in daemon.evidence(task_id, "failure") if d["attempt"] == paused.attempt]
    evidence = failed["body"]["evidence"]
    argvs = [" ".join(c["argv"]) for c in evidence["commands"]]
    assert any("dumpsys window" in a for a in argvs), argvs  # the snapshot's foreground read
    assert not any("no command ran" in n for n in evidence["notes"]), evidence["notes"]
    assert any("ended runtime_offline" in n for n in evidence["notes"])
