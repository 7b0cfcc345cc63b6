// Names are never cut and never broken inside a word: a name wraps to two lines between its
// words, and one that would need more is set smaller until it takes two, down to the CSS's
// smallest size for a name (--name-min on the name or above it; the big screen sets it
// large enough to read across a room). A word wider than its box ("Bartholomewsonsmithy"
// in a phone's seat) is set smaller still, as far as it takes to fit whole: a smaller
// name beats "Bartholomews / onsmithy".

const MAX_LINES = 2;
const STEP_PX = 1;
const SMALLEST_WORD_PX = 4; // a bound for the loop: twenty W's fit a phone's seat above it

function linesOf(node, style) {
  const lineHeight = parseFloat(style.lineHeight);
  if (!lineHeight) return 1; // "normal": the name styles set it, so this is a hidden node
  return Math.round(node.getBoundingClientRect().height / lineHeight);
}

// Whether a word of `node` is wider than its box (names wrap between words only: the CSS's
// overflow-wrap is normal, so a long word overflows rather than breaks).
function overflowsAWord(node) {
  if (!node.clientWidth) return false; // an inline name has no box: nothing to measure
  return node.scrollWidth > node.clientWidth + 1;
}

// Sets `node`'s font size (a name's text) to the largest that fits MAX_LINES lines with
// every word whole; never smaller for nothing.
export function fitName(node) {
  node.style.fontSize = "";
  let style = getComputedStyle(node);
  const smallest = parseFloat(style.getPropertyValue("--name-min")) || 7;
  let size = parseFloat(style.fontSize);
  const setSize = (px) => {
    size = px;
    node.style.fontSize = `${px}px`;
    style = getComputedStyle(node);
  };
  while (size - STEP_PX >= smallest && linesOf(node, style) > MAX_LINES) setSize(size - STEP_PX);
  shrinkToWholeWords(node, size);
}

// Sets `node` (from `size` px down) smaller until its longest word fits its box whole.
function shrinkToWholeWords(node, size) {
  while (size - STEP_PX >= SMALLEST_WORD_PX && overflowsAWord(node)) {
    size -= STEP_PX;
    node.style.fontSize = `${size}px`;
  }
}

// A line of text with names in it (class "fit-words": the banner, "Bartholomewsonsmithy
// takes the pile!", the game-over title, the deck's "whose turn"):
// as many lines as it needs, but no word broken; one too wide for the box sets the whole
// line smaller.
export function fitWords(node) {
  node.style.fontSize = "";
  shrinkToWholeWords(node, parseFloat(getComputedStyle(node).fontSize));
}

export function fitNames(root) {
  for (const node of root.querySelectorAll(".name-text")) fitName(node);
  for (const node of root.querySelectorAll(".fit-words")) fitWords(node);
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
