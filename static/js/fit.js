// Names are never cut: a name wraps to two lines (at spaces, or anywhere in a long word),
// and one that would still need more lines is set smaller until it takes two. A word
// wider than its box ("Christophersonjacobs") is set a little smaller too, to stay whole,
// and only broken where that is not enough. The smallest size a name may take is the
// CSS's word (--name-min on the name or above it); the big screen sets it large enough
// to read across a room.

const MAX_LINES = 2;
const STEP_PX = 1;
const WHOLE_WORD_SCALE = 0.8; // a word stays whole down to 80% of the name's own size

function linesOf(node, style) {
  const lineHeight = parseFloat(style.lineHeight);
  if (!lineHeight) return 1; // "normal": the name styles set it, so this is a hidden node
  return Math.round(node.getBoundingClientRect().height / lineHeight);
}

// Whether a word of `node` is wider than its box, so wrapping breaks it: measured with
// breaks between words only (a name in a flex row has a box of its own to overflow).
function breaksAWord(node) {
  if (!node.clientWidth) return false; // an inline name has no box: nothing to measure
  node.style.overflowWrap = "normal";
  const broken = node.scrollWidth > node.clientWidth + 1;
  node.style.overflowWrap = "";
  return broken;
}

// Sets `node`'s font size (a name's text) to the largest that fits MAX_LINES lines, and
// smaller still (not much) where that keeps its words whole; never smaller for nothing.
export function fitName(node) {
  node.style.fontSize = "";
  let style = getComputedStyle(node);
  const smallest = parseFloat(style.getPropertyValue("--name-min")) || 7;
  let size = parseFloat(style.fontSize);
  const wholeWords = Math.max(smallest, size * WHOLE_WORD_SCALE);
  const setSize = (px) => {
    size = px;
    node.style.fontSize = `${px}px`;
    style = getComputedStyle(node);
  };
  while (size - STEP_PX >= smallest && linesOf(node, style) > MAX_LINES) setSize(size - STEP_PX);
  if (!breaksAWord(node)) return;
  const fitted = node.style.fontSize;
  for (let px = size - STEP_PX; px >= wholeWords; px -= STEP_PX) {
    setSize(px);
    if (!breaksAWord(node)) return;
  }
  node.style.fontSize = fitted; // no size keeps them whole: the two-line fit stands
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
