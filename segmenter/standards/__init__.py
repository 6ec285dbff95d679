"""words → standards: how a standard writes words (levels, conventions, their rules)."""
