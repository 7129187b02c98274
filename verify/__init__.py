"""verify — the verdict: theory vs measured runs, tightness against exact worst cases, the CLI.

Example
-------
>>> import verify
>>> verify.__name__
'verify'
"""
