"""Types, events and errors shared by every layer. Imports nothing of ours."""
