"""A run as it happens, for whoever watches: frames a second (`frames`), kept for late and returning
readers (`hub`), written as JSON Lines (`jsonl`) and served as OpenMetrics (`metrics`).

Never prints and never serves pages (crest.web does); the CLI wires the sinks a command asks for.
"""
