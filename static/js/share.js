// The share panel: copy the link, the system share sheet where there is one, the QR code.

import { byId, setText, show } from "./dom.js";
import { say } from "./messages.js";

// The link onto the clipboard: the async Clipboard API where the page has it (a secure
// context: HTTPS, localhost), else the copy command, the link field selected and the link
// handed to the copy event itself (a selected field that is hidden copies nothing in
// Chromium, yet the command reports success). True only when the browser took the link.
async function copyLink(url) {
  if (window.isSecureContext && navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(url);
      return true;
    } catch {
      // no permission: the copy command may still be allowed
    }
  }
  const input = byId("share-url");
  input.select();
  input.setSelectionRange(0, input.value.length); // iOS selects nothing with select() alone
  let handed = false;
  const onCopy = (event) => {
    if (!event.clipboardData) return;
    event.clipboardData.setData("text/plain", url);
    event.preventDefault();
    handed = true;
  };
  document.addEventListener("copy", onCopy);
  let ran = false;
  try {
    ran = document.execCommand("copy");
  } catch {
    ran = false;
  } finally {
    document.removeEventListener("copy", onCopy);
  }
  return ran && handed;
}

// Where the browser would not copy: the link in sight and selected, to copy by hand.
function offerTheLink() {
  const input = byId("share-url");
  input.closest(".share-link").classList.add("share-link--by-hand");
  input.focus({ preventScroll: true });
  input.select();
  input.setSelectionRange(0, input.value.length);
}

// `alwaysShown`: the shared screen keeps the invitation beside the table in every phase.
export function setupShare({ url, room, alwaysShown = false }) {
  const panel = byId("share-panel");
  const toggle = byId("share-toggle");
  let open = false;

  function render(phase) {
    const inline = phase === "lobby" || alwaysShown;
    panel.classList.toggle("share--sheet", !inline);
    show(panel, inline || open);
    toggle.setAttribute("aria-expanded", String(inline || open));
  }

  let phase = "connecting";
  toggle.addEventListener("click", () => {
    open = phase === "lobby" ? true : !open;
    render(phase);
    if (phase === "lobby") panel.scrollIntoView({ behavior: "smooth", block: "center" });
    else if (open) byId("copy-link").focus();
  });
  byId("share-close").addEventListener("click", () => {
    open = false;
    render(phase);
    toggle.focus();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && open && phase !== "lobby") byId("share-close").click();
  });
  panel.addEventListener("click", (event) => {
    if (event.target === panel) byId("share-close").click(); // tap outside the card closes it
  });
  byId("copy-link").addEventListener("click", async () => {
    const copied = await copyLink(url);
    if (copied) {
      window.getSelection()?.removeAllRanges();
      byId("copy-link").focus({ preventScroll: true });
    } else offerTheLink();
    setText(byId("share-done"), say(copied ? "share.copied" : "share.copy_by_hand"));
  });
  const nativeShare = byId("native-share");
  show(nativeShare, typeof navigator.share === "function");
  nativeShare.addEventListener("click", () => {
    navigator.share({ title: say("share.title"), text: say("share.text", { room }), url }).catch(() => {});
  });

  return {
    setPhase(next) {
      if (next === phase) return;
      phase = next;
      if (phase !== "lobby") open = false;
      render(phase);
    },
  };
}
