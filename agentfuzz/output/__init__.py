"""What a run leaves for people: ``findings/`` (the store, one finding per root cause, repro
bundles on disk) and ``reports/`` (HTML, Markdown, JUnit and each bundle's REPORT.md).
"""
