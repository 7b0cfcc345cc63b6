// A room code out of whatever a person pastes or types in the home page's box: the code
// itself in any case, with spaces or dashes ("k7p qrx"), or a whole table link
// ("http://192.168.1.20:8000/r/K7PQRX", with /tv or ?query after it). Pure: unit-tested.

const CODE_PATTERN = /^[A-Z0-9]{6}$/;

// The code, or null when there is none to be found.
export function roomCodeFrom(text) {
  const raw = String(text ?? "").trim().toUpperCase();
  const link = raw.match(/\/R\/([^/?#]+)/);
  const code = (link ? link[1] : raw).replace(/[^A-Z0-9]/g, "");
  return CODE_PATTERN.test(code) ? code : null;
}
