"""Test support shared by every area: a loopback model-provider server speaking real wire protocols."""

from tests.support.loopback_server import (
    Failure,
    LoopbackServer,
    RecordedRequest,
    Text,
    Thinking,
    ToolCall,
    Turn,
    Usage,
)

__all__ = ["Failure", "LoopbackServer", "RecordedRequest", "Text", "Thinking", "ToolCall", "Turn", "Usage"]
