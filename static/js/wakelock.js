// Keeps the phone's screen on during a game, where the browser allows it.

let lock = null;
let wanted = false;

async function acquire() {
  if (!wanted || lock || !("wakeLock" in navigator) || document.visibilityState !== "visible") return;
  try {
    lock = await navigator.wakeLock.request("screen");
    lock.addEventListener("release", () => {
      lock = null;
    });
  } catch {
    lock = null; // denied (battery saver, no permission): the game goes on regardless
  }
}

export function keepScreenOn(on) {
  wanted = on;
  if (on) acquire();
  else if (lock) lock.release().catch(() => {});
}

// The browser drops the lock whenever the page is hidden; take it again on return.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") acquire();
});
