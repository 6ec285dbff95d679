"""scores → words: the word decoder and its joins, the word table, the user dictionary, assembly."""
