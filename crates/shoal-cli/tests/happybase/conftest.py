"""Shims for running happybase 1.3.0's own tests/test_api.py, unmodified,
against a server the Rust test started.

- test_api.py uses `assert_raises` without importing it (nose's name, gone
  from happybase's test dependencies): it is pytest.raises.
- test_api.py passes HAPPYBASE_PORT as read from the environment, a string,
  which happybase 1.3.0 hands to socket.connect unconverted: made an int.
- HAPPYBASE_PROTOCOL (not read by test_api.py) picks happybase's protocol,
  so the same tests run over the compact protocol too.
"""
import builtins
import os

import happybase.connection
import pytest

builtins.assert_raises = pytest.raises

_init = happybase.connection.Connection.__init__


def _connection_init(self, *args, **kwargs):
    if isinstance(kwargs.get("port"), str):
        kwargs["port"] = int(kwargs["port"])
    protocol = os.environ.get("HAPPYBASE_PROTOCOL")
    if protocol and "protocol" not in kwargs:
        kwargs["protocol"] = protocol
    _init(self, *args, **kwargs)


happybase.connection.Connection.__init__ = _connection_init
