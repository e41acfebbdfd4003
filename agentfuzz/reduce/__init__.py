"""Reduction, validity and explanation of a failing case: pure, over a given check."""
