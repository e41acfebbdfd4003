"""Data only: the history a client sends, what came back, a session's plan, the run summary,
the modes, what the faces accept, files written at once."""
