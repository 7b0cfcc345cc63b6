// The connection to the room: the official Socket.IO client, served by our own app.
// Reconnects by itself; the auth callback re-reads name and token on every attempt,
// so a reconnect after a refresh or a network drop takes the same seat back.
// A dropped network is retried often (at most RECONNECT_MAX_MS apart, with jitter), so a
// page is back within a second of the network's return even where the browser says
// nothing; where it does (`online`, the page shown again) main.js calls wake() at once.
// Retries go by long-polling first, then upgrade to a websocket: browsers hold back new
// websockets to a server that failed several (Firefox waits seconds: RFC 6455's back-off),
// never plain requests.
// A server restart (a `restart` event, or a refusal saying the server is shutting down)
// is no goodbye: the page keeps trying until the new process takes it back, even where
// Socket.IO itself would stop (a server-initiated disconnect, a refused connection).

import { io } from "/static/vendor/socket.io.esm.min.js";

const ACK_TIMEOUT_MS = 5000;
// Between tries while the server restarts: soon at first, then every few seconds.
const RESTART_RETRY_MS = [300, 600, 1200, 2500];
const RETRY_FIRST_MS = 1000; // after a rate_limited refusal; doubles each time
const RETRY_MAX_MS = 30000;
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 800;
// The first connection: a websocket, or long-polling where websockets fail (a proxy that
// refuses them). Every retry after a drop: long-polling first (see above).
const FIRST_TRANSPORTS = ["websocket", "polling"];
const RETRY_TRANSPORTS = ["polling", "websocket"];

// A refusal's reason arrives as connect_error data ({code, message}).
function refusalOf(error) {
  if (error && error.data && typeof error.data === "object") return error.data;
  return { code: "refused", message: error && error.message };
}

export function openRoomSocket({ room, getName, getToken, getAvatar, getInvite, watch = false, on }) {
  const socket = io({
    path: "/socket.io",
    transports: FIRST_TRANSPORTS,
    tryAllTransports: true,
    reconnectionDelay: RECONNECT_FIRST_MS,
    reconnectionDelayMax: RECONNECT_MAX_MS,
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
      const invite = getInvite ? getInvite() : "";
      if (invite) auth.invite = invite;
      if (watch) auth.watch = true;
      send(auth);
    },
  });

  // Each retry opens a new engine with the manager's options as they are then.
  socket.io.on("reconnect_attempt", () => {
    socket.io.opts.transports = RETRY_TRANSPORTS;
  });
  // Which transport carries the connection, from the engine's opening on (the top bar's
  // dot keeps it, for anyone asking).
  const noteTransport = () => on.transport?.(socket.io.engine?.transport?.name ?? "");
  socket.io.on("open", () => {
    noteTransport();
    socket.io.engine.once("upgrade", noteTransport);
  });

  let restarting = false; // told the server is restarting, and not yet back
  let tries = 0;
  let retryTimer = 0;

  function retrySoon() {
    restarting = true;
    on.status("restarting");
    clearTimeout(retryTimer);
    const delay = RESTART_RETRY_MS[Math.min(tries, RESTART_RETRY_MS.length - 1)];
    tries += 1;
    retryTimer = setTimeout(() => {
      if (!socket.connected) socket.connect();
    }, delay);
  }

  // Told by the server that the table is paused ("paused", "held"), on this connection: a
  // notice sent as we join comes before Socket.IO's own `connect` (it hands on what came with
  // its opening first), which must not say "connected" over it.
  let pausedAs = null;

  socket.on("connect", () => {
    restarting = false;
    tries = 0;
    clearTimeout(retryTimer);
    on.status(pausedAs || "connected");
  });
  socket.on("disconnect", (reason) => {
    pausedAs = null;
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
  // The server measures our round trip (while the room judges lag-fair or false starts)
  // with lag pings, on their own or riding on a state: each answered at once, with its id.
  const pong = (id) => {
    if (typeof id === "string") socket.emit("pong", { id });
  };
  socket.on("welcome", (data) => on.welcome(data));
  // A state carries the events of the change that made it (`events`): the store takes both.
  // A lag ping may ride on it (`ping`): answered first, as a ping of its own is.
  socket.on("state", (data) => {
    pong(data && data.ping);
    on.state(data);
  });
  // An event's page (/e/CODE) gets the event's state instead.
  socket.on("event_state", (data) => on.eventState && on.eventState(data));
  // The server's notices outside any change: `restart`, `paused`, `resumed`.
  socket.on("event", (data) => {
    if (data && data.kind === "restart") {
      restarting = true;
      on.status("restarting");
    } else if (data && data.kind === "paused") {
      pausedAs = data.by === "organiser" ? "held" : "paused";
      on.status(pausedAs);
    } else if (data && data.kind === "resumed") {
      pausedAs = null;
      on.status("connected");
    }
    on.event(data);
  });
  socket.on("ping", (data) => pong(data && data.id));

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

  // After sleep the backoff timer may be long: drop it and try again right away (by
  // long-polling first: websockets may be held back).
  function wake() {
    if (socket.connected) return;
    socket.disconnect();
    socket.io.opts.transports = RETRY_TRANSPORTS;
    socket.connect();
  }

  return { socket, send, connect: () => socket.connect(), wake };
}
