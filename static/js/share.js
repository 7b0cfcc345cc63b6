// The share panel: copy the link, the system share sheet where there is one, the QR code.

import { byId, setText, show } from "./dom.js";
import { say } from "./messages.js";

async function copyLink(url) {
  try {
    await navigator.clipboard.writeText(url);
    return true;
  } catch {
    const input = byId("share-url"); // older browsers, or no clipboard permission
    input.select();
    return document.execCommand && document.execCommand("copy");
  }
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
    setText(byId("share-done"), say((await copyLink(url)) ? "share.copied" : "share.copy_by_hand"));
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
