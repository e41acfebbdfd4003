"""Verdicts and the loops over a given send: the judge, trials against a stochastic target,
the session's agent loop. Pure: they send through the callable they are given."""
