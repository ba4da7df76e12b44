"""The TLS context of a request: the CA bundle is loaded only for a request that can reach TLS."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from piwork.core.llm.transport import _no_tls_context, _plain_http_here, _ssl_context, make_client
from piwork.core.llm.types import StreamOptions


@pytest.mark.parametrize(
    ("url", "proxy", "plain"),
    [
        ("http://127.0.0.1:8080/v1", None, True),
        ("http://localhost:11434/v1", None, True),
        ("HTTP://[::1]:8080/v1", None, True),
        ("https://127.0.0.1:8080/v1", None, False),  # TLS to this computer: verified as anywhere
        ("http://127.0.0.1:8080/v1", "https://proxy.example:3128", False),  # the proxy may speak TLS
        ("http://api.example.com/v1", None, False),  # the environment's proxies apply to remote hosts
        ("https://api.anthropic.com/v1", None, False),
    ],
)
def test_only_plain_http_to_this_computer_without_a_proxy_goes_without_the_ca_bundle(
    url: str, proxy: str | None, plain: bool
) -> None:
    assert _plain_http_here(url, proxy) is plain


def test_the_context_without_the_bundle_still_verifies_and_trusts_nothing() -> None:
    context = _no_tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    assert _ssl_context().cert_store_stats()["x509_ca"] > 0


def test_clients_are_made_for_plain_and_tls_urls() -> None:
    async def made() -> None:
        for url in ("http://127.0.0.1:9/v1", "https://api.example.com/v1"):
            client = make_client(StreamOptions(), url)
            await client.aclose()

    asyncio.run(made())
