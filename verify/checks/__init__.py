"""One module per bound family; each check is registered with :func:`verify.suite.register`."""
