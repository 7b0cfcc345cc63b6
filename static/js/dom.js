// Tiny DOM helpers. Player text only ever goes through textContent (never innerHTML).

export const byId = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function setText(node, text) {
  const value = text === undefined || text === null ? "" : String(text);
  if (node.textContent !== value) node.textContent = value;
}

export function show(node, visible) {
  node.hidden = !visible;
}
