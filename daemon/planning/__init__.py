"""What a planner is told: the device planning context and the classification of a task."""
