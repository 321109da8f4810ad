"""Messages and the service stub generated from proto/ctxc/v1 (`make python-stubs`)."""
