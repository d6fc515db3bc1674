"""Version numbers both sides exchange in `initialize`."""

__version__ = "0.1.0"

PROTOCOL_VERSION = 1
SUPPORTED_PROTOCOLS = range(1, 2)
