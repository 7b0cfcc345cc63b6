// What the browser remembers between visits: your name, each room's seat token, preferences.

const PREFIX = "slapjack.";

export function load(key, fallback) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback; // private mode or corrupt value: behave like a first visit
  }
}

export function save(key, value) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the game still works, it just forgets on refresh
  }
}

export const loadName = () => load("name", "");
export const saveName = (name) => save("name", name);
export const loadAvatar = () => load("avatar", "");
export const saveAvatar = (avatar) => save("avatar", avatar);
export const loadToken = (room) => load(`token.${room}`, null);
export const saveToken = (room, token) => save(`token.${room}`, token);
