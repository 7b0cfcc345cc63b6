// The LAN address `make run` prints (http://192.168.x.y:8000) is no secure context: there
// browsers offer no screen lock, no share sheet and no clipboard API. The page works round
// each (wakelock.js, share.js); the host is told once, on this device, what the address
// cannot do and how to serve the app over HTTPS.

import { byId, show } from "./dom.js";
import { amHost } from "./state.js";
import { load, save } from "./storage.js";

const SEEN = "plainAddressNoted";

export function createPlainAddressNote({ secure = window.isSecureContext } = {}) {
  const note = byId("plain-address");
  let shown = false;
  byId("plain-address-ok").addEventListener("click", () => {
    show(note, false);
    byId("start").focus({ preventScroll: true });
  });
  return {
    // Called with every new state: shows the note to the host in the lobby, once.
    update(state) {
      if (secure || shown || !amHost(state) || state.phase !== "lobby" || load(SEEN, false)) return;
      shown = true;
      save(SEEN, true);
      show(note, true);
    },
  };
}
