// Keeps the phone's screen on during a game, where the browser allows it.

export function createWakeLock() {
  let lock = null;
  let asking = false;
  let wanted = false;

  async function acquire() {
    if (!wanted || lock || asking || !("wakeLock" in navigator) || document.visibilityState !== "visible") return;
    asking = true;
    try {
      const sentinel = await navigator.wakeLock.request("screen");
      sentinel.addEventListener("release", () => {
        if (lock === sentinel) lock = null;
      });
      if (wanted) lock = sentinel;
      else sentinel.release().catch(() => {}); // the game ended while we asked
    } catch {
      // denied (battery saver, no permission): the game goes on regardless
    } finally {
      asking = false;
    }
  }

  // The browser drops the lock whenever the page is hidden; take it again on return.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") acquire();
  });

  return {
    keepScreenOn(on) {
      wanted = on;
      if (on) acquire();
      else if (lock) lock.release().catch(() => {});
    },
  };
}
