"""`python -m app`: serve the app and print the address to open on a phone."""

import uvicorn

from app.config import get_settings, lan_address

__all__ = ["lan_address", "main"]  # app.pages shares the LAN address too


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
        ws_max_size=settings.max_message_bytes,  # the same cap engine.io applies
    )


if __name__ == "__main__":
    main()
