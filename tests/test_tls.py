"""wss:// end to end: a certificate made here, a real TLS server, real clients.

``castell-server --certfile PEM --keyfile PEM`` serves TLS only; a client trusts it through
``--cafile`` (``client.net.tls.client_ssl_context``), refuses it without, and ``--insecure``
connects while saying loudly that nothing is checked.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
from pathlib import Path

import attrs
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.exceptions import InvalidMessage

from client.net.net import GameClient
from client.net.tls import client_ssl_context
from shared import messages as m
from tests.support.servers import ServerProcess, run_server_cli, serving

#: One worker runs this module's tests (`--dist loadgroup` in .ci/run), so that its module
#: fixture is made once, not once in every worker that takes one of them.
pytestmark = [pytest.mark.timeout(60), pytest.mark.xdist_group("test_tls")]


@attrs.frozen
class Pem:
    cert: str
    key: str
    both: str  # certificate and key in one file


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> Pem:
    """A self-signed certificate for 127.0.0.1 (and localhost), valid for a day."""
    folder: Path = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "castell test server")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    paths = Pem(str(folder / "cert.pem"), str(folder / "key.pem"), str(folder / "both.pem"))
    Path(paths.cert).write_bytes(cert_pem)
    Path(paths.key).write_bytes(key_pem)
    Path(paths.both).write_bytes(cert_pem + key_pem)
    return paths


def tls_server(pem: Pem, **changes: object):
    return serving(certfile=pem.cert, keyfile=pem.key, **changes)


async def test_a_client_trusting_the_certificate_plays_over_wss(pem):
    async with tls_server(pem) as (_srv, url):
        context = client_ssl_context(url, cafile=pem.cert)
        async with await GameClient.connect(url, ssl_context=context) as c:
            assert (await c.hello("Anna")).protocol == 1
            joined = await c.request(m.CreateRoom, name="over TLS", seats=2)
            await c.request(m.AddBot)
            await c.request(m.StartGame)
            state = await c.wait_state(lambda p: p.view["status"] == "playing")
            assert state.room == joined.room
            assert c.ws.transport.get_extra_info("ssl_object") is not None


async def test_without_the_certificate_verification_fails(pem):
    async with tls_server(pem) as (_srv, url):
        with pytest.raises(ssl.SSLCertVerificationError):
            await GameClient.connect(url, ssl_context=client_ssl_context(url))
        # a plain ws:// client gets no game either
        with pytest.raises((InvalidMessage, ConnectionError, OSError, asyncio.TimeoutError)):
            await GameClient.connect(url.replace("wss://", "ws://"), open_timeout=2)


async def test_insecure_connects_and_says_so(pem):
    async with tls_server(pem) as (_srv, url):
        said: list[str] = []
        context = client_ssl_context(url, insecure=True, warn=said.append)
        async with await GameClient.connect(url, ssl_context=context) as c:
            assert (await c.hello("Brave")).protocol == 1
        assert len(said) == 1 and "NOT checked" in said[0]


async def test_a_silent_socket_is_dropped_before_the_tls_handshake_ends(pem):
    async with tls_server(pem, open_timeout=0.3) as (srv, url):
        loop = asyncio.get_running_loop()
        sock = socket.create_connection(("127.0.0.1", srv.port))
        sock.setblocking(False)
        async with asyncio.timeout(3):
            assert await loop.sock_recv(sock, 1024) == b""
        sock.close()
        async with await GameClient.connect(
                url, ssl_context=client_ssl_context(url, cafile=pem.cert)) as c:
            await c.hello("After")


async def test_castell_server_serves_wss_from_the_command_line(pem):
    # the certificate and key in one file: --certfile alone
    with ServerProcess("--db", ":memory:", "--certfile", pem.both) as srv:
        assert srv.url.startswith("wss://")
        context = client_ssl_context(srv.url, cafile=pem.cert)
        async with await GameClient.connect(srv.url, ssl_context=context) as c:
            assert (await c.hello("Cli")).protocol == 1
    with ServerProcess("--db", ":memory:", "--certfile", pem.cert, "--keyfile", pem.key) as srv:
        async with await GameClient.connect(
                srv.url, ssl_context=client_ssl_context(srv.url, cafile=pem.cert)) as c:
            assert (await c.hello("Cli")).protocol == 1


def test_a_bad_certificate_is_refused_in_words(pem, tmp_path):
    missing = run_server_cli("--port", "0", "--db", ":memory:",
                             "--certfile", str(tmp_path / "none.pem"))
    assert missing.returncode == 1
    assert "cannot use the certificate or key: No such file" in missing.stderr
    wrong = tmp_path / "wrong.pem"
    wrong.write_text("not a certificate\n")
    bad = run_server_cli("--port", "0", "--db", ":memory:", "--certfile", str(wrong))
    assert bad.returncode == 1 and "cannot use the certificate or key" in bad.stderr
    # someone else's key does not go with this certificate
    other = tmp_path / "other-key.pem"
    other.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    mismatch = run_server_cli("--port", "0", "--db", ":memory:", "--certfile", pem.cert,
                              "--keyfile", str(other))
    assert mismatch.returncode == 1 and "cannot use the certificate or key" in mismatch.stderr
    keyless = run_server_cli("--port", "0", "--db", ":memory:", "--keyfile", pem.key)
    assert keyless.returncode == 2 and "--keyfile needs --certfile" in keyless.stderr
    assert "Traceback" not in missing.stderr + bad.stderr + mismatch.stderr + keyless.stderr
