// The interface's language in the scripts: Django's catalog (djangojs, loaded by base.html
// before every module) and numbers written the way the page's language (<html lang>) writes them.
// Every string a module shows a person goes through gettext or ngettext, with named
// placeholders: gettext("Panel %(index)s", { index }) — the catalog's translators may
// reorder them. tests/test_interface_strings.py fails on a string shown without them.

const catalog = globalThis.django || {};

export const language = document.documentElement.lang || "en";

// %(name)s -> values.name (what Django's interpolate does with named=true).
function fill(text, values) {
  return values === undefined ? text : text.replace(/%\((\w+)\)s/g, (_, name) => String(values[name]));
}

// The message in the page's language, its %(name)s placeholders filled from `values`.
export function gettext(message, values) {
  return fill(catalog.gettext ? catalog.gettext(message) : message, values);
}

// The singular or plural message (the catalog's plural rules) for `count`; `values`
// defaults to {count}.
export function ngettext(singular, plural, count, values = { count }) {
  const text = catalog.ngettext ? catalog.ngettext(singular, plural, count) : count === 1 ? singular : plural;
  return fill(text, values);
}

// The same with a context, for a word that reads differently in different places.
export function pgettext(context, message, values) {
  return fill(catalog.pgettext ? catalog.pgettext(context, message) : message, values);
}

const numbers = new Intl.NumberFormat(language);
// 12,345 (or the page language's way of writing it).
export function formatNumber(value) {
  return numbers.format(value);
}
