// Keeps the phone's screen on during a game. Where the browser has the Wake Lock API (a
// secure context: HTTPS or localhost) the page asks it for a screen lock; where it has not
// (the LAN address `make run` prints, http://192.168.x.y:8000, is no secure context), it
// plays a muted, inline, looping video of a few blank frames (the technique of the npm
// package nosleep.js, whose two tiny videos are static/media/awake.*): browsers keep the
// screen on while a video plays. A browser may want a tap before any video plays: the
// page tries at once and again on the player's next tap or key.
// `document.body.dataset.awake` says which keeps the screen on: "lock", "video" or "".

const VIDEOS = [
  ["/static/media/awake.webm", "video/webm"],
  ["/static/media/awake.mp4", "video/mp4"],
];
const LOOP_FROM_S = 0.5; // the mp4 runs 2 s: seek back before its end, as nosleep.js does

function awakeVideo() {
  const video = document.createElement("video");
  video.muted = true;
  video.loop = true;
  video.playsInline = true;
  video.setAttribute("playsinline", "");
  video.setAttribute("muted", "");
  video.setAttribute("aria-hidden", "true");
  video.preload = "auto";
  for (const [src, type] of VIDEOS) {
    const source = document.createElement("source");
    source.src = src;
    source.type = type;
    video.append(source);
  }
  video.addEventListener("timeupdate", () => {
    if (video.duration > 1 && video.currentTime > LOOP_FROM_S) video.currentTime = 0;
  });
  video.addEventListener("playing", () => (document.body.dataset.awake = "video"));
  video.addEventListener("pause", () => (document.body.dataset.awake = ""));
  return video;
}

export function createWakeLock({ native = "wakeLock" in navigator } = {}) {
  let lock = null;
  let asking = false;
  let wanted = false;
  // A refused lock (battery saver, no permission) is asked for again only once the page
  // has been hidden and shown, not on every new state of the game.
  let refused = false;
  let video = null;

  const mark = (how) => {
    document.body.dataset.awake = how;
  };

  async function acquire() {
    if (!wanted || lock || asking || refused || document.visibilityState !== "visible") return;
    asking = true;
    try {
      const sentinel = await navigator.wakeLock.request("screen");
      sentinel.addEventListener("release", () => {
        if (lock !== sentinel) return;
        lock = null;
        mark("");
      });
      if (wanted) {
        lock = sentinel;
        mark("lock");
      } else sentinel.release().catch(() => {}); // the game ended while we asked
    } catch {
      refused = true; // the game goes on regardless
    } finally {
      asking = false;
    }
  }

  function play() {
    if (!wanted || document.visibilityState !== "visible") return;
    video ||= awakeVideo();
    if (!video.paused) return;
    // Refused without a tap: the next tap or key tries again (listeners below).
    video.play().catch(() => {});
  }

  function stop() {
    if (lock) lock.release().catch(() => {});
    lock = null;
    if (video) video.pause();
    mark("");
  }

  const keep = native ? acquire : play;
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible") return;
    refused = false; // the browser drops the lock whenever the page is hidden: ask again
    keep();
  });
  if (!native) {
    for (const kind of ["pointerdown", "keydown"]) {
      document.addEventListener(kind, () => wanted && video?.paused !== false && play(), { capture: true, passive: true });
    }
  }

  return {
    // Called with every new state: asks (or plays) only while nothing keeps the screen on.
    keepScreenOn(on) {
      if (!on && wanted) stop();
      wanted = on;
      if (on) keep();
    },
  };
}
