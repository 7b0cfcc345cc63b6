// The connection to the room: the official Socket.IO client, served by our own app.
// Reconnects by itself; the auth callback re-reads name and token on every attempt,
// so a reconnect after a refresh or a network drop takes the same seat back.
// A server restart (a `restart` event, or a refusal saying the server is shutting down)
// is no goodbye: the page keeps trying until the new process takes it back, even where
// Socket.IO itself would stop (a server-initiated disconnect, a refused connection).

import { io } from "/static/vendor/socket.io.esm.min.js";

const ACK_TIMEOUT_MS = 5000;
// Between tries while the server restarts: soon at first, then every few seconds.
const RESTART_RETRY_MS = [300, 600, 1200, 2500];
// Socket.IO's own reconnections back off to DELAY_MAX_MS; once the server said it restarts,
// to RESTART_DELAY_MAX_MS: a deploy's new process answers within seconds, and every page
// should be back within a second of it (a page merely offline keeps the longer backoff).
const DELAY_MAX_MS = 3000;
const RESTART_DELAY_MAX_MS = 1000;
const RETRY_FIRST_MS = 1000; // after a rate_limited refusal; doubles each time
const RETRY_MAX_MS = 30000;

// A refusal's reason arrives as connect_error data ({code, message}).
function refusalOf(error) {
  if (error && error.data && typeof error.data === "object") return error.data;
  return { code: "refused", message: error && error.message };
}

export function openRoomSocket({ room, getName, getToken, getAvatar, watch = false, on }) {
  const socket = io({
    path: "/socket.io",
    transports: ["websocket", "polling"],
    reconnectionDelay: 400,
    reconnectionDelayMax: DELAY_MAX_MS,
    autoConnect: false,
    // In a cluster the router (nginx `hash $arg_room consistent`) sends every request of a
    // room, long-polling included, to the one process that judges it.
    query: { room },
    auth: (send) => {
      const auth = { room, name: getName() };
      const token = getToken();
      if (token) auth.token = token;
      const avatar = getAvatar ? getAvatar() : "";
      if (avatar) auth.avatar = avatar;
      if (watch) auth.watch = true;
      send(auth);
    },
  });

  let restarting = false; // told the server is restarting, and not yet back
  let tries = 0;
  let retryTimer = 0;

  function restartingNow() {
    restarting = true;
    socket.io.reconnectionDelayMax(RESTART_DELAY_MAX_MS);
    on.status("restarting");
  }

  function retrySoon() {
    restartingNow();
    clearTimeout(retryTimer);
    const delay = RESTART_RETRY_MS[Math.min(tries, RESTART_RETRY_MS.length - 1)];
    tries += 1;
    retryTimer = setTimeout(() => {
      if (!socket.connected) socket.connect();
    }, delay);
  }

  socket.on("connect", () => {
    restarting = false;
    socket.io.reconnectionDelayMax(DELAY_MAX_MS);
    tries = 0;
    clearTimeout(retryTimer);
    on.status("connected");
  });
  socket.on("disconnect", (reason) => {
    // The server (or another tab holding our token) closed us: Socket.IO will not retry.
    if (reason === "io server disconnect" && !restarting) on.closed(reason);
    else if (reason === "io server disconnect") retrySoon();
    else on.status(restarting ? "restarting" : "reconnecting");
  });
  // rate_limited is no final answer: after a network blip every phone comes back at once.
  // Try again later, waiting longer each time (with jitter, so they do not return together).
  let limitedTries = 0;
  socket.on("connect", () => (limitedTries = 0));
  socket.on("connect_error", (error) => {
    const refusal = refusalOf(error);
    if (socket.active) on.status(restarting ? "restarting" : "reconnecting"); // retrying by itself
    else if (restarting || refusal.code === "shutting_down") retrySoon(); // the old process, closing
    else if (refusal.code === "rate_limited") {
      on.status("reconnecting");
      const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** limitedTries++);
      setTimeout(() => socket.connect(), wait * (0.5 + Math.random()));
    } else on.refused(refusal); // the server said no: needs the person to act
  });
  socket.on("welcome", (data) => on.welcome(data));
  // A state carries the events of the change that made it (`events`): the store takes both.
  socket.on("state", (data) => on.state(data));
  // The server's notices outside any change: `restart`, `paused`, `resumed`.
  socket.on("event", (data) => {
    if (data && data.kind === "restart") restartingNow();
    else if (data && data.kind === "paused") on.status("paused");
    else if (data && data.kind === "resumed") on.status("connected");
    on.event(data);
  });
  // The server measures our round trip (only while the room's lag_fair rule is on): answer
  // at once, with its id.
  socket.on("ping", (data) => {
    if (data && typeof data.id === "string") socket.emit("pong", { id: data.id });
  });

  // Every action resolves to the server's ack, or an error shaped like one (its words are
  // messages.js's, by code).
  async function send(name, payload = {}) {
    if (!socket.connected) {
      return { ok: false, error: { code: "offline" } };
    }
    try {
      return await socket.timeout(ACK_TIMEOUT_MS).emitWithAck(name, payload);
    } catch {
      return { ok: false, error: { code: "timeout" } };
    }
  }

  // After sleep the backoff timer may be long: drop it and try again right away.
  function wake() {
    if (socket.connected) return;
    socket.disconnect();
    socket.connect();
  }

  return { socket, send, connect: () => socket.connect(), wake };
}
