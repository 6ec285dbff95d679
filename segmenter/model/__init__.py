"""plan → scores: model folders, head profiles, engines, reading attention."""
