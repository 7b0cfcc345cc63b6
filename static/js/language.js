// The page's language on a first visit: the server chose it from Accept-Language; if the
// browser's own list (navigator.languages) prefers another language we have, remember that
// one (the cookie the server reads, as the EN | BM switch does) and load the page again.

const SUPPORTED = ["en", "ms"];
const COOKIE = "lang";
const YEAR_SECONDS = 365 * 24 * 3600;

// The first of the browser's languages that we have ("ms-MY" -> "ms"), or null.
export function preferredLanguage(languages, supported = SUPPORTED) {
  for (const tag of languages || []) {
    const primary = String(tag).split("-")[0].toLowerCase();
    if (supported.includes(primary)) return primary;
  }
  return null;
}

export const hasChosen = (cookies) => cookies.split(";").some((part) => part.trim().startsWith(`${COOKIE}=`));

export function followBrowserLanguage(doc = document, nav = navigator, place = location) {
  if (hasChosen(doc.cookie)) return false;
  const wanted = preferredLanguage(nav.languages?.length ? nav.languages : [nav.language]);
  if (!wanted || wanted === doc.documentElement.lang) return false;
  doc.cookie = `${COOKIE}=${wanted}; max-age=${YEAR_SECONDS}; path=/; samesite=lax`;
  // Cookies refused: stay in the server's choice rather than reload for ever.
  if (!hasChosen(doc.cookie)) return false;
  place.reload();
  return true;
}
