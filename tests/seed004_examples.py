"""The seed-004 examples (shared/seeds/004 §3) the ingress tests and the release-gate
scenario feed in, in one place."""

from __future__ import annotations

# The single-task example of seed 004 §3, with a v1 method in place of the robot's.
SEED004_TASK = {
    "taskMethod": "dnd.set",
    "executionMode": "async",
    "contract_version": "a2a-task-orchestration-v1",
    "cloud_workflow_id": "wf_voice_001",
    "cloud_step_id": "step_quiet",
    "cloud_plan_id": "plan_meeting",
    "cloud_output_key": "dnd_result",
    "wait_policy": "completed",
    "conversation_id": "c1",
    "params": {"mode": "priority"},
}

# How seed 004 §3's workflow example is addressed: its method, source, queue and mode.
SEED004_WORKFLOW_ENVELOPE = {
    "method": "submitWorkflow",
    "source": "CLOUD",
    "queue": "workflow",
    "taskQueue": "workflow",
    "forceTaskManager": True,
    "workflowName": "meeting_prep",
    "executionMode": "queued_wait",
}

# The workflow example of seed 004 §3: root subTasks, payload mirror, repeated methods.
SEED004_WORKFLOW = {
    **SEED004_WORKFLOW_ENVELOPE,
    "conversation_id": "c1",
    "subTasks": [
        {
            "taskMethod": "volume.set",
            "stream": "ring",
            "percent": 0,
            "completionTarget": "volume.ring.0",
        },
        {"taskMethod": "dnd.set", "mode": "priority", "completionTarget": "dnd.priority"},
        {
            "taskMethod": "volume.set",
            "stream": "music",
            "level": 3,
            "completionTarget": "volume.music.3",
        },
    ],
}
