"""Server adapters: how crest starts and stops targets; the only package that starts servers."""

from crest.servers.builtin import BuiltinServer, ServeSpec

__all__ = ["BuiltinServer", "ServeSpec"]
