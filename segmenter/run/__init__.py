"""running: cores, threads, helper processes, lines and files."""
