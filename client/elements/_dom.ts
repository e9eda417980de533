/**
 * The element's two DOM helpers: `h` builds an HTML element (text goes in as
 * text, never as markup), `svg` an SVG one. Where there is no `HTMLElement`
 * (a server importing the module), a stand-in class holds the name while the
 * element's class is defined, then goes (`dropStandIn`), so the import does
 * not throw.
 *
 * @module
 */

const global = globalThis as { HTMLElement?: unknown };
const standIn = global.HTMLElement === undefined;
if (standIn) global.HTMLElement = class {};

/** Removes the stand-in `HTMLElement`, if this module put one. */
export function dropStandIn(): void {
  if (standIn) delete global.HTMLElement;
}

/** A child: a node, text, or nothing. */
export type Child = Node | string | null | undefined | false;
/** Attributes (`true`: present) and listeners (`on*`). */
export type Props = Record<string, string | boolean | undefined | ((event: Event) => void)>;

/** An element with attributes, listeners (`on*`) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** An SVG element with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}
