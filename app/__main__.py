"""`python -m app`: serve the app and print the address to open on a phone."""

import socket

import uvicorn

from app.config import get_settings


def lan_address() -> str:
    """The machine's address on the local network, for the link friends open."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: UDP connect only picks a route
        return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


def main() -> None:
    settings = get_settings()
    host = lan_address() if settings.host in ("0.0.0.0", "::") else settings.host
    print(f"\n  Slapjack is running: open http://{host}:{settings.port}/\n", flush=True)
    uvicorn.run(
        "app.main:app",
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        proxy_headers=False,
    )


if __name__ == "__main__":
    main()
