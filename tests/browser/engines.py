"""One page in any of the three engines the players' phones run, behind one small seam, so a
test body runs unchanged in Chromium, Firefox and WebKit:

- Chromium: Debian's chromium through Playwright (as every other browser test).
- Firefox: Debian's firefox-esr, headless, spoken to over WebDriver BiDi directly (its own
  `--remote-debugging-port`; no geckodriver): one user context (its own cookies and
  storage) and one tab per page.
- WebKit: WebKitGTK's MiniBrowser under Xvfb, through Debian's WebKitWebDriver (classic
  WebDriver): one toolbar-less window per page, so its viewport is exactly the size asked.

Every page asks for reduced motion (the page then plays each animation once, at once): the
tests measure still layouts, and an endless one (the turn's pulse) would have a
software-rendered window, 4K for the big screen, repainted every frame for nothing.

Every engine reaches the app on the LAN name `party.test` (`lan_url`), which is no secure
context, as a phone reaches `http://192.168.1.20:8000/`: Chromium by
`--host-resolver-rules`, Firefox by `network.dns.forceResolve`, WebKit through a loopback
proxy (lan_proxy.py) that plays the Wi-Fi. A page's functions (`evaluate`, `wait_for`) are
JavaScript function sources called with one argument."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import websockets
from lan_proxy import LanProxy
from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

ENGINES = ("chromium", "firefox", "webkit")
LAN_HOST = "party.test"
WAIT_MS = 20_000  # a bound for a shared 2-core machine: waits end on what they wait for
POLL_SECONDS = 0.05
START_SECONDS = 60  # a bound for a browser to start on a loaded machine
# A bound for one driver command (a BiDi message's answer, a WebDriver request): at a load
# average of 30 and more a starved browser took over 20 s to answer one.
COMMAND_SECONDS = 60
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
XVFB = "/usr/bin/Xvfb"
# Xvfb's screen: large enough for a 4K television's window.
XVFB_SCREEN = "3840x2160x24"
# W3C WebDriver's key codes for the keys the tests press.
KEYS = {"Enter": "\ue007", "Space": " ", "Escape": "\ue00c", "Control": "\ue009"}

# Script errors a page met: installed by the test where the driver has no log of its own.
COLLECT_ERRORS = """() => {
  if (window.__errors) return;
  window.__errors = [];
  window.addEventListener('error', (e) => window.__errors.push(`page error: ${e.message}`));
  window.addEventListener('unhandledrejection',
    (e) => window.__errors.push(`unhandled rejection: ${e.reason}`));
  const original = console.error.bind(console);
  console.error = (...args) => { window.__errors.push(`console error: ${args.join(' ')}`);
                                 original(...args); };
}"""
# The centre of an element, scrolled into view, once it stands still (the same box over
# an animation frame: a lobby's line rewrapping moves the buttons under it) and nothing
# covers it there (a toast, an overlay): where a finger or pointer lands. Null until then.
CENTRE_OF = """async (selector) => {
  const node = document.querySelector(selector);
  if (!node) return null;
  node.scrollIntoView({block: 'center', inline: 'center'});
  const before = node.getBoundingClientRect();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const r = node.getBoundingClientRect();
  if (!r.width || !r.height || r.left !== before.left || r.top !== before.top) return null;
  const [x, y] = [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)];
  const hit = document.elementFromPoint(x, y);
  return hit && (hit === node || node.contains(hit)) ? [x, y] : null;
}"""


# The `open_page` fixture's type: open_page(engine, width, height, touch=True).
OpenPage = Callable[..., Awaitable["EnginePage"]]


def lan_url(url: str) -> str:
    """The same address on the LAN name: http://127.0.0.1:PORT/x -> http://party.test:PORT/x."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{LAN_HOST}:{parts.port}"))


def key_strokes(keys: list[str], held: str | None = None) -> dict[str, Any]:
    """WebDriver's (and BiDi's) key actions: each key pressed and let go, while `held` is
    held down (Control for a paste)."""
    strokes: list[dict[str, Any]] = [{"type": "keyDown", "value": held}] if held else []
    for key in keys:
        strokes += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
    if held:
        strokes.append({"type": "keyUp", "value": held})
    return {"type": "key", "id": "keyboard", "actions": strokes}


def _die_with_parent() -> None:
    """In a browser's process before it starts: the kernel ends it when the test worker that
    started it ends, however that ends (a timeout's kill leaves no browser behind)."""
    PR_SET_PDEATHSIG = 1  # prctl(2)
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class EnginePage(ABC):
    """A page in one engine: the few things the three-engine tests do with it."""

    engine: str

    @abstractmethod
    async def goto(self, url: str) -> None: ...

    @abstractmethod
    async def evaluate(self, function: str, arg: Any = None) -> Any:
        """Calls the JavaScript function `function` with `arg` in the page, awaiting a promise."""

    @abstractmethod
    async def click(self, selector: str, timeout_ms: float = WAIT_MS) -> None:
        """A real press (a pointer's down and up) at the element's centre, once it is shown
        (TimeoutError if it is not within `timeout_ms`)."""

    @abstractmethod
    async def type(self, selector: str, text: str) -> None:
        """Focuses the field and types `text` key by key."""

    @abstractmethod
    async def press(self, key: str) -> None:
        """One key: a character, or Enter, Space, Escape."""

    @abstractmethod
    async def paste(self) -> None:
        """Control+V: the system clipboard into the focused field."""

    @abstractmethod
    async def screenshot(self, path: Path) -> None: ...

    @abstractmethod
    async def set_viewport(self, width: int, height: int) -> None: ...

    @abstractmethod
    async def cut_network(self) -> None:
        """The phone loses the network: nothing reaches the server until `restore_network`."""

    @abstractmethod
    async def restore_network(self) -> None: ...

    def refused(self) -> list[str]:
        """The requests the cut network refused (their request lines), where the network is
        a proxy that sees them (WebKit's); none where the browser fails them itself."""
        return []

    @abstractmethod
    async def errors(self) -> list[str]:
        """Script errors and console errors the page met so far."""

    @abstractmethod
    async def close(self) -> None: ...

    async def wait_for(self, function: str, arg: Any = None, timeout_ms: float = WAIT_MS) -> Any:
        """The first truthy value of `function(arg)`, asked every 50 ms."""
        async with asyncio.timeout(timeout_ms / 1000):
            while True:
                value = await self.evaluate(function, arg)
                if value:
                    return value
                await asyncio.sleep(POLL_SECONDS)

    async def next_frame(self) -> None:
        """After the page's next two animation frames: a resize has been laid out and drawn."""
        await self.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )


# ---------------------------------------------------------------------------- Chromium


class ChromiumPage(EnginePage):
    engine = "chromium"

    def __init__(self, context: BrowserContext, page: Page) -> None:
        self.context, self.page = context, page
        self._errors: list[str] = []
        page.on("pageerror", lambda error: self._errors.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: (
                message.type == "error" and self._errors.append(f"console error: {message.text}")
            ),
        )

    @classmethod
    async def open(cls, browser: Browser, width: int, height: int, touch: bool) -> ChromiumPage:
        context = await browser.new_context(
            viewport={"width": width, "height": height},
            has_touch=touch,
            is_mobile=touch,
            reduced_motion="reduce",
            bypass_csp=True,  # axe is injected as a script the page's policy refuses
        )
        await context.grant_permissions(["clipboard-read", "clipboard-write"])
        return cls(context, await context.new_page())

    async def goto(self, url: str) -> None:
        await self.page.goto(url)

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        return await self.page.evaluate(function, arg)

    async def click(self, selector: str, timeout_ms: float = WAIT_MS) -> None:
        try:
            await self.page.locator(selector).click(timeout=timeout_ms)
        except PlaywrightTimeout as error:
            raise TimeoutError(str(error)) from error

    async def type(self, selector: str, text: str) -> None:
        await self.page.locator(selector).press_sequentially(text, timeout=WAIT_MS)

    async def press(self, key: str) -> None:
        await self.page.keyboard.press(key)

    async def paste(self) -> None:
        await self.page.keyboard.press("Control+V")

    async def screenshot(self, path: Path) -> None:
        await self.page.screenshot(path=path, animations="disabled")

    async def set_viewport(self, width: int, height: int) -> None:
        await self.page.set_viewport_size({"width": width, "height": height})

    async def cut_network(self) -> None:
        await self.context.set_offline(True)

    async def restore_network(self) -> None:
        await self.context.set_offline(False)

    async def errors(self) -> list[str]:
        return list(self._errors)

    async def close(self) -> None:
        await self.context.close()


# ---------------------------------------------------------------------------- Firefox

# Firefox's own chatter off (updates, telemetry, remote settings: no network here), and
# every name resolving to this machine (a LAN name for the tests, never the internet).
FIREFOX_PREFS = {
    "network.dns.forceResolve": "127.0.0.1",
    "app.update.enabled": False,
    "app.normandy.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "toolkit.telemetry.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/",
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "extensions.update.enabled": False,
    "browser.search.update": False,
    "ui.useOverlayScrollbars": 1,  # a phone's: they take no room from the page
    "ui.prefersReducedMotion": 1,
    "media.autoplay.default": 0,  # a page may start its muted video (the screen's keep-awake)
    "dom.events.asyncClipboard.readText": True,
    "dom.events.testing.asyncClipboard": True,
    "remote.prefs.recommended": True,
}


class FirefoxBrowser:
    """firefox-esr, headless, with WebDriver BiDi on a port of its own."""

    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="slapjack-firefox-"))
        self.process: subprocess.Popen[bytes] | None = None
        self.socket: Any = None
        self._ids = itertools.count(1)
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[Any] = []
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> FirefoxBrowser:
        prefs = "".join(
            f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in FIREFOX_PREFS.items()
        )
        (self.profile / "user.js").write_text(prefs)
        self.process = subprocess.Popen(
            [
                FIREFOX,
                "--headless",
                "--no-remote",
                "--profile",
                str(self.profile),
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"},
            preexec_fn=_die_with_parent,
        )
        address = await asyncio.to_thread(self._listening_on)
        self.socket = await websockets.connect(f"{address}/session", max_size=None)
        self._reader = asyncio.create_task(self._read())
        # A new session starts Firefox's browsing machinery: the slowest answer of all on a
        # starved machine (over a minute seen beside two test runs and a soak).
        await self.send("session.new", {"capabilities": {}}, seconds=2 * START_SECONDS)
        await self.send("session.subscribe", {"events": ["log.entryAdded"]})
        return self

    def _listening_on(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        deadline = time.monotonic() + START_SECONDS
        for raw in self.process.stderr:
            line = raw.decode(errors="replace")
            if "WebDriver BiDi listening on " in line:
                # Firefox goes on writing to stderr: drain it so it never blocks on a pipe.
                stderr = self.process.stderr
                threading.Thread(target=stderr.read, daemon=True).start()
                return line.split("listening on ", 1)[1].strip()
            if time.monotonic() > deadline:
                break
        raise RuntimeError("firefox-esr did not open WebDriver BiDi")

    async def _read(self) -> None:
        async for raw in self.socket:
            message = json.loads(raw)
            if "id" in message and message["id"] in self._answers:
                answer = self._answers.pop(message["id"])
                # A command given up on (a wait that timed out while its question was on
                # the way) has a cancelled future: its late answer is dropped, and the
                # reader goes on answering the others.
                if not answer.done():
                    answer.set_result(message)
            elif message.get("type") == "event":
                for listener in self._listeners:
                    listener(message)

    async def send(
        self, method: str, params: dict[str, Any], seconds: float = COMMAND_SECONDS
    ) -> dict[str, Any]:
        ident = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._answers[ident] = answer
        try:
            await self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
            async with asyncio.timeout(seconds):
                message = await answer
        finally:
            self._answers.pop(ident, None)
        if message.get("type") == "error":
            raise RuntimeError(f"{method}: {message.get('error')}: {message.get('message')}")
        result: dict[str, Any] = message["result"]
        return result

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def close(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send("browser.close", {}), 5)
            self._reader.cancel()
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(self.process.wait, 10)
            if self.process.poll() is None:
                self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def _deserialize(value: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (the kinds a test's function returns)."""
    kind = value["type"]
    if kind in ("undefined", "null"):
        return None
    if kind in ("string", "boolean"):
        return value["value"]
    if kind == "number":
        number = value["value"]
        if isinstance(number, str):  # NaN, -0, Infinity
            return float(number.replace("Infinity", "inf")) if number != "-0" else 0
        return number
    if kind == "array":
        return [_deserialize(item) for item in value.get("value", [])]
    if kind == "object":
        return {key: _deserialize(item) for key, item in value.get("value", [])}
    return value.get("value")


class FirefoxPage(EnginePage):
    engine = "firefox"

    def __init__(self, browser: FirefoxBrowser, user_context: str, context: str) -> None:
        self.browser, self.user_context, self.context = browser, user_context, context
        self._errors: list[str] = []
        browser._listeners.append(self._log)

    @classmethod
    async def open(cls, browser: FirefoxBrowser, width: int, height: int) -> FirefoxPage:
        user_context = (await browser.send("browser.createUserContext", {}))["userContext"]
        created = await browser.send(
            "browsingContext.create", {"type": "tab", "userContext": user_context}
        )
        page = cls(browser, user_context, created["context"])
        await page.set_viewport(width, height)
        return page

    def _log(self, message: dict[str, Any]) -> None:
        params = message.get("params", {})
        if message.get("method") != "log.entryAdded" or params.get("level") != "error":
            return
        if params.get("source", {}).get("context") == self.context:
            kind = "page error" if params.get("type") == "javascript" else "console error"
            self._errors.append(f"{kind}: {params.get('text')}")

    async def goto(self, url: str) -> None:
        await self.browser.send(
            "browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"}
        )

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        result = await self.browser.send(
            "script.callFunction",
            {
                "functionDeclaration": f"(argument) => ({function})(JSON.parse(argument))",
                "arguments": [{"type": "string", "value": json.dumps(arg)}],
                "target": {"context": self.context},
                "awaitPromise": True,
                "resultOwnership": "none",
            },
        )
        if result["type"] == "exception":
            raise RuntimeError(f"firefox: {result['exceptionDetails']['text']}")
        return _deserialize(result["result"])

    async def _actions(self, actions: list[dict[str, Any]]) -> None:
        await self.browser.send(
            "input.performActions", {"context": self.context, "actions": actions}
        )

    async def click(self, selector: str, timeout_ms: float = WAIT_MS) -> None:
        centre = await self.wait_for(CENTRE_OF, selector, timeout_ms)
        x, y = centre
        await self._actions(
            [
                {
                    "type": "pointer",
                    "id": "finger",
                    "parameters": {"pointerType": "mouse"},
                    "actions": [
                        {"type": "pointerMove", "x": x, "y": y},
                        {"type": "pointerDown", "button": 0},
                        {"type": "pointerUp", "button": 0},
                    ],
                }
            ]
        )

    async def _keys(self, keys: list[str], held: str | None = None) -> None:
        await self._actions([key_strokes(keys, held)])

    async def type(self, selector: str, text: str) -> None:
        await self.evaluate("(s) => document.querySelector(s).focus()", selector)
        await self._keys(list(text))

    async def press(self, key: str) -> None:
        await self._keys([KEYS.get(key, key)])

    async def paste(self) -> None:
        await self._keys(["v"], held=KEYS["Control"])

    async def screenshot(self, path: Path) -> None:
        shot = await self.browser.send(
            "browsingContext.captureScreenshot", {"context": self.context}
        )
        path.write_bytes(base64.b64decode(shot["data"]))

    async def set_viewport(self, width: int, height: int) -> None:
        await self.browser.send(
            "browsingContext.setViewport",
            {"context": self.context, "viewport": {"width": width, "height": height}},
        )

    async def _network(self, conditions: dict[str, str] | None) -> None:
        await self.browser.send(
            "emulation.setNetworkConditions",
            {"networkConditions": conditions, "userContexts": [self.user_context]},
        )

    async def cut_network(self) -> None:
        await self._network({"type": "offline"})

    async def restore_network(self) -> None:
        await self._network(None)

    async def errors(self) -> list[str]:
        return list(self._errors)

    async def close(self) -> None:
        if self._log in self.browser._listeners:
            self.browser._listeners.remove(self._log)
        if self.browser.alive():
            with contextlib.suppress(Exception):
                await self.browser.send(
                    "browser.removeUserContext", {"userContext": self.user_context}
                )


# ---------------------------------------------------------------------------- WebKit


class WebKitBrowser:
    """MiniBrowser under its own Xvfb display, driven by WebKitWebDriver; its traffic goes
    through a LAN proxy (LAN names, and a network that can be cut)."""

    def __init__(self) -> None:
        self.xvfb: subprocess.Popen[bytes] | None = None
        self.driver: subprocess.Popen[bytes] | None = None
        self.proxy = LanProxy()
        self.http: httpx.AsyncClient | None = None
        self.session = ""
        self.home = ""  # the session's first window: never closed, opens the others
        self.current = ""
        self.lock = asyncio.Lock()  # one window at a time: classic WebDriver has one focus
        self.config: Path | None = None  # XDG_CONFIG_HOME: GTK's settings

    async def start(self) -> WebKitBrowser:
        self.proxy.start()
        read, write = os.pipe()
        self.xvfb = subprocess.Popen(
            [XVFB, "-displayfd", str(write), "-screen", "0", XVFB_SCREEN, "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        os.close(write)
        with os.fdopen(read) as display_fd:
            display = (await asyncio.to_thread(display_fd.readline)).strip()
        if not display:
            raise RuntimeError("Xvfb did not start")
        port = free_port()
        # WebKitGTK's prefers-reduced-motion follows GTK's gtk-enable-animations.
        self.config = Path(tempfile.mkdtemp(prefix="slapjack-webkit-"))
        (self.config / "gtk-3.0").mkdir()
        (self.config / "gtk-3.0" / "settings.ini").write_text(
            "[Settings]\ngtk-enable-animations=0\n"
        )
        self.driver = subprocess.Popen(
            [WEBKIT_DRIVER, f"--port={port}"],
            env={**os.environ, "DISPLAY": f":{display}", "XDG_CONFIG_HOME": str(self.config)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        self.http = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=START_SECONDS)
        async with asyncio.timeout(START_SECONDS):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await self.http.get("/status")).status_code == 200:
                        break
                await asyncio.sleep(POLL_SECONDS)
        proxy = f"127.0.0.1:{self.proxy.port}"
        created = await self._request(
            "POST",
            "/session",
            {
                "capabilities": {
                    "alwaysMatch": {
                        "browserName": "MiniBrowser",
                        "proxy": {"proxyType": "manual", "httpProxy": proxy, "noProxy": []},
                        "webkitgtk:browserOptions": {
                            "binary": MINIBROWSER,
                            "args": [
                                "--automation",
                                "--javascript-can-open-windows-automatically=true",
                                "--enable-media-stream=false",
                            ],
                        },
                    }
                }
            },
        )
        self.session = created["sessionId"]
        self.home = self.current = await self.command("GET", "/window")
        return self

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        assert self.http is not None
        answer = await self.http.request(method, path, json=body, timeout=COMMAND_SECONDS)
        value = answer.json()["value"]
        if answer.status_code != 200:
            raise RuntimeError(f"WebKitWebDriver {method} {path}: {value}")
        return value

    async def command(self, method: str, path: str, body: Any = None) -> Any:
        return await self._request(method, f"/session/{self.session}{path}", body)

    async def in_window(self, handle: str, method: str, path: str, body: Any = None) -> Any:
        async with self.lock:
            if self.current != handle:
                await self.command("POST", "/window", {"handle": handle})
                self.current = handle
            return await self.command(method, path, body)

    def alive(self) -> bool:
        return self.driver is not None and self.driver.poll() is None

    async def close(self) -> None:
        if self.http is not None:
            with contextlib.suppress(Exception):
                await self.command("DELETE", "")
            await self.http.aclose()
        for process in (self.driver, self.xvfb):
            if process is not None and process.poll() is None:
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    await asyncio.to_thread(process.wait, 10)
                if process.poll() is None:
                    process.kill()
        self.proxy.stop()
        if self.config is not None:
            shutil.rmtree(self.config, ignore_errors=True)


class WebKitPage(EnginePage):
    engine = "webkit"

    def __init__(self, browser: WebKitBrowser, handle: str) -> None:
        self.browser, self.handle = browser, handle
        self.cut = False

    @classmethod
    async def open(cls, browser: WebKitBrowser, width: int, height: int) -> WebKitPage:
        async with browser.lock:
            if browser.current != browser.home:
                await browser.command("POST", "/window", {"handle": browser.home})
                browser.current = browser.home
            before = set(await browser.command("GET", "/window/handles"))
            # A popup has no toolbar: its viewport is its window.
            await browser.command(
                "POST",
                "/execute/sync",
                {
                    "script": "window.open('about:blank', '', `popup,width=${arguments[0]},"
                    "height=${arguments[1]}`); return true;",
                    "args": [width, height],
                },
            )
            handle = None
            async with asyncio.timeout(WAIT_MS / 1000):
                while handle is None:
                    fresh = set(await browser.command("GET", "/window/handles")) - before
                    handle = next(iter(fresh), None)
                    if handle is None:
                        await asyncio.sleep(POLL_SECONDS)
        page = cls(browser, handle)
        await page.set_viewport(width, height)
        return page

    async def _do(self, method: str, path: str, body: Any = None) -> Any:
        return await self.browser.in_window(self.handle, method, path, body)

    async def goto(self, url: str) -> None:
        await self._do("POST", "/url", {"url": url})
        await self.evaluate(COLLECT_ERRORS)

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        value = await self._do(
            "POST",
            "/execute/async",
            {
                "script": f"const done = arguments[1]; Promise.resolve(({function})(arguments[0]))"
                ".then(done, (e) => done({__error: String(e && e.stack || e)}));",
                "args": [arg],
            },
        )
        if isinstance(value, dict) and "__error" in value:
            raise RuntimeError(f"webkit: {value['__error']}")
        return value

    async def _element(self, selector: str, timeout_ms: float = WAIT_MS) -> str:
        await self.wait_for(CENTRE_OF, selector, timeout_ms)
        found = await self._do("POST", "/element", {"using": "css selector", "value": selector})
        return str(next(iter(found.values())))

    async def click(self, selector: str, timeout_ms: float = WAIT_MS) -> None:
        element = await self._element(selector, timeout_ms)
        await self._do("POST", f"/element/{element}/click", {})

    async def type(self, selector: str, text: str) -> None:
        element = await self._element(selector)
        await self._do("POST", f"/element/{element}/value", {"text": text})

    async def _keys(self, keys: list[str], held: str | None = None) -> None:
        await self._do("POST", "/actions", {"actions": [key_strokes(keys, held)]})
        await self._do("DELETE", "/actions")

    async def press(self, key: str) -> None:
        await self._keys([KEYS.get(key, key)])

    async def paste(self) -> None:
        await self._keys(["v"], held=KEYS["Control"])

    async def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(await self._do("GET", "/screenshot")))

    async def set_viewport(self, width: int, height: int) -> None:
        await self._do("POST", "/window/rect", {"width": width, "height": height})
        # The window manager resizes the window when it gets to it (a loaded machine: after
        # the command answered): the page's own size says when.
        try:
            await self.wait_for(
                "([w, h]) => innerWidth === w && innerHeight === h", [width, height]
            )
        except TimeoutError:
            size = await self.evaluate("() => [innerWidth, innerHeight]")
            raise RuntimeError(
                f"webkit: asked for a {width}x{height} viewport, got {size}"
            ) from None

    async def cut_network(self) -> None:
        await asyncio.to_thread(self.browser.proxy.cut)

    async def restore_network(self) -> None:
        await asyncio.to_thread(self.browser.proxy.restore)

    def refused(self) -> list[str]:
        return list(self.browser.proxy.refused)

    async def errors(self) -> list[str]:
        found = await self.evaluate("() => window.__errors || []")
        return list(found)

    async def close(self) -> None:
        """Closes the window, leaving nothing of it to the next page: the session's windows
        share one store of cookies and storage, which WebDriver clears for the open
        document's site only."""
        if self.browser.alive():
            with contextlib.suppress(Exception):
                await self.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
                await self._do("DELETE", "/cookie")
            with contextlib.suppress(Exception):
                await self._do("DELETE", "/window")
            self.browser.current = ""
