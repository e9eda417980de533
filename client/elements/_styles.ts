/**
 * The element's style sheet: every color from a CSS custom property whose
 * default is `light-dark(light, dark)`, so the element follows the
 * `color-scheme` it inherits from the host page, or its `theme` attribute
 * (`light`, `dark`, `auto`: the system's); AA contrast in both. Below 48em of
 * its own width (a container query) each key is a card. Adopted as one shared
 * constructable sheet, so a Content Security Policy without `'unsafe-inline'`
 * styles still applies it.
 *
 * @module
 */
import { h } from "./_dom.ts";

/** The shadow root's CSS. */
export const STYLES = `
:host{display:block;container-type:inline-size;font:var(--api-keys-manager-font,inherit);
--f:var(--api-keys-manager-color,light-dark(#1f2328,#f0f6fc));
--b:var(--api-keys-manager-background,light-dark(#fff,#0d1117));
--m:var(--api-keys-manager-muted,light-dark(#59636e,#9198a1));
--l:var(--api-keys-manager-border,light-dark(#d1d9e0,#3d444d));
--a:var(--api-keys-manager-accent,light-dark(#0969da,#4493f8));
--d:var(--api-keys-manager-danger,light-dark(#cf222e,#f85149));
--w:var(--api-keys-manager-warning,light-dark(#9a6700,#d29922));
--r:var(--api-keys-manager-radius,6px);color:var(--f);background:var(--b)}
:host([theme=light]){color-scheme:light}
:host([theme=dark]){color-scheme:dark}
:host([theme=auto]){color-scheme:light dark}
[hidden]{display:none!important}
section{overflow-wrap:break-word}
.name,code,.wrap,dialog{overflow-wrap:anywhere}
button{overflow-wrap:normal}
header,.tools,.row,.menu,.acts{display:flex;flex-wrap:wrap;gap:.5em}
header{align-items:center;justify-content:space-between}
h2{font-size:1.25em;margin:.5em 0}
h3{margin-top:0}
h4{margin:.5em 0 .2em;font-size:1em}
.tools{align-items:end;margin:.5em 0}
.tools label{margin:0;flex:1 1 9em}
.tools label.grow{flex:3 1 14em}
table{border-collapse:collapse;width:100%}
th,td{text-align:start;padding:.4em .5em;border-bottom:1px solid var(--l);vertical-align:top}
th{font-weight:600}
code{font-family:var(--api-keys-manager-mono,ui-monospace,monospace)}
.name{display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}
.m{color:var(--m)}
.small,.note,.total,.tip,td[data-col=credits]>span{display:block;font-size:.85em}
td[data-col=credits]>span:first-child{font-size:1em}td[data-col=credits]>.badge{display:inline-block}
.tip{min-height:1.3em}
.note{color:var(--w)}
.badge{display:inline-block;margin-inline-start:.4em;padding:0 .4em;border:1px solid;
border-radius:1em;font-size:.85em;color:var(--w)}
.st{font-weight:600}.st.rotating{color:var(--w)}.st.revoked,.st.expired{color:var(--d)}
tr.pair>th{box-shadow:inset 3px 0 var(--w)}tr.pair>th:dir(rtl){box-shadow:inset -3px 0 var(--w)}
.pool{margin:.5em 0;font-weight:600}
button,input,select,textarea{font:inherit;color:inherit;background:var(--b);border:1px solid var(--l);
border-radius:var(--r);padding:.3em .7em;max-width:100%}
button{cursor:pointer;color:var(--a)}
button.p{background:var(--a);border-color:var(--a);color:var(--b)}
button.x{color:var(--d)}
button.x.p{background:var(--d);border-color:var(--d);color:var(--b)}
button:disabled{opacity:.6;cursor:not-allowed}
:focus-visible{outline:2px solid var(--a);outline-offset:2px}
td button{padding:.1em .5em}
.menu{margin-top:.3em}
dialog{color:var(--f);background:var(--b);border:1px solid var(--l);border-radius:var(--r);
box-sizing:border-box;width:min(34em,calc(100vw - 1em));max-height:calc(100dvh - 1em);overflow:auto}
dialog:has(>table){width:min(56em,calc(100vw - 1em))}
dialog::backdrop{background:rgb(0 0 0/.5)}
label,fieldset{display:block;margin:.6em 0}
label>input,label>select,label>textarea{display:block;margin-top:.2em;width:100%;box-sizing:border-box}
fieldset{border:1px solid var(--l);border-radius:var(--r);margin-inline:0}
label.check{display:flex;gap:.5em;align-items:flex-start;margin:.3em 0}
label.check input{margin:0;flex:none;width:24px;height:24px}
label.check>span{flex:1;min-width:0}
label.check .m{display:block;font-size:.85em}
ul{margin:.2em 0;padding-inline-start:1.2em}
.row{justify-content:flex-end;margin-top:1em}
.pager{justify-content:center}
.secret{display:block;padding:.5em;border:1px solid var(--l);border-radius:var(--r);
word-break:break-all;user-select:all}
.alert,.msg.alert{color:var(--d)}
.msg{min-height:1.3em;margin:.5em 0}
.confirm{border:1px solid var(--d);border-radius:var(--r);padding:.5em;margin:.5em 0}
.confirm p{margin:0 0 .5em}
svg{display:block;color:var(--a);margin:.2em 0}
svg rect.on{fill:var(--f)}svg rect{fill:currentColor}
@container (max-width:47.99em){
table,thead,tbody,tr,th,td{display:block}
thead tr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
tr{border:1px solid var(--l);border-radius:var(--r);margin:.6em 0;padding:.4em .6em}
th,td{border:0;padding:.25em 0}
td:empty{display:none}
td[data-label]::before{content:attr(data-label);display:block;font-size:.8em;color:var(--m)}}
`;

/** The sheet every shadow root adopts, made on first use (importing needs no DOM). */
let sheet: CSSStyleSheet | undefined;

/**
 * Styles `root` with the shared sheet; where `adoptedStyleSheets` is missing,
 * with a `<style>` (which a CSP without `'unsafe-inline'` styles refuses).
 */
export function adoptStyles(root: ShadowRoot): void {
  if ((root as Partial<ShadowRoot>).adoptedStyleSheets === undefined) {
    root.append(h("style", {}, STYLES));
    return;
  }
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
  }
  root.adoptedStyleSheets = [sheet];
}
