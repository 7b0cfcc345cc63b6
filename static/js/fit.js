// Names are never cut: a name wraps to two lines (at spaces, or anywhere in a long word),
// and one that would still need more lines is set smaller until it takes two. The
// smallest size a name may take is the CSS's word (--name-min on the name or above it);
// the big screen sets it large enough to read across a room.

const MAX_LINES = 2;
const STEP_PX = 1;

function linesOf(node, style) {
  const lineHeight = parseFloat(style.lineHeight);
  if (!lineHeight) return 1; // "normal": the name styles set it, so this is a hidden node
  return Math.round(node.getBoundingClientRect().height / lineHeight);
}

// Sets `node`'s font size (a name's text) to the largest that fits MAX_LINES lines.
export function fitName(node) {
  node.style.fontSize = "";
  let style = getComputedStyle(node);
  const smallest = parseFloat(style.getPropertyValue("--name-min")) || 7;
  let size = parseFloat(style.fontSize);
  while (size - STEP_PX >= smallest && linesOf(node, style) > MAX_LINES) {
    size -= STEP_PX;
    node.style.fontSize = `${size}px`;
    style = getComputedStyle(node);
  }
}

export function fitNames(root) {
  for (const node of root.querySelectorAll(".name-text")) fitName(node);
}

// A new screen size (a phone turned) changes every name's room.
export function refitOnResize(root) {
  let pending = false;
  window.addEventListener("resize", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fitNames(root);
    });
  });
}
