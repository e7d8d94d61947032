"""The command-line client: click commands that talk to the service through its API."""
