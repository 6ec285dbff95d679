"""text → plan: runs, vocabulary, windows, the batch layout."""
