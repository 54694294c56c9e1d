// DOM helpers every layer uses: an element from a tag, attributes and
// children, and ids unique in the page.

// h makes an element: attrs set attributes ("class", "text" and on<event>
// are special; null, undefined and false are left out), kids are appended,
// strings as text.
export function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

let made = 0;

// uid is an element id no other call of uid in this page gave.
export const uid = (p) => `${p}-${++made}`;
