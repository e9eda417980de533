/**
 * The element's style sheet: every color from a CSS custom property with light
 * and dark defaults (`prefers-color-scheme`), AA contrast in both.
 *
 * @module
 */

/** The shadow root's CSS. */
export const STYLES = `
:host{display:block;color-scheme:light dark;font:var(--api-keys-manager-font,inherit);
--f:var(--api-keys-manager-color,#1f2328);--b:var(--api-keys-manager-background,#fff);
--m:var(--api-keys-manager-muted,#59636e);--l:var(--api-keys-manager-border,#d1d9e0);
--a:var(--api-keys-manager-accent,#0969da);--d:var(--api-keys-manager-danger,#cf222e);
--w:var(--api-keys-manager-warning,#9a6700);--r:var(--api-keys-manager-radius,6px);
color:var(--f);background:var(--b)}
@media (prefers-color-scheme:dark){:host{
--f:var(--api-keys-manager-color,#f0f6fc);--b:var(--api-keys-manager-background,#0d1117);
--m:var(--api-keys-manager-muted,#9198a1);--l:var(--api-keys-manager-border,#3d444d);
--a:var(--api-keys-manager-accent,#4493f8);--d:var(--api-keys-manager-danger,#f85149);
--w:var(--api-keys-manager-warning,#d29922)}}
[hidden]{display:none!important}
header{display:flex;align-items:center;justify-content:space-between;gap:1em}
h2{font-size:1.25em;margin:.5em 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:start;padding:.4em .5em;border-bottom:1px solid var(--l);vertical-align:top}
th{font-weight:600}
code{font-family:var(--api-keys-manager-mono,ui-monospace,monospace)}
.m{color:var(--m)}
.badge{display:inline-block;margin-inline-start:.4em;padding:0 .4em;border:1px solid;
border-radius:1em;font-size:.85em;color:var(--w)}
button,input,select{font:inherit;color:inherit;background:var(--b);border:1px solid var(--l);
border-radius:var(--r);padding:.3em .7em}
button{cursor:pointer;color:var(--a)}
button.p{background:var(--a);border-color:var(--a);color:var(--b)}
button.x{color:var(--d)}
button.x.p{background:var(--d);border-color:var(--d);color:var(--b)}
button:disabled{opacity:.6;cursor:not-allowed}
:focus-visible{outline:2px solid var(--a);outline-offset:2px}
td button{margin-inline-end:.3em;padding:.1em .5em}
td:last-child{white-space:nowrap}
dialog{color:var(--f);background:var(--b);border:1px solid var(--l);border-radius:var(--r);
max-width:min(32em,90vw)}
dialog::backdrop{background:rgb(0 0 0/.5)}
label,fieldset{display:block;margin:.6em 0}
label>input,label>select{display:block;margin-top:.2em;width:100%;box-sizing:border-box}
fieldset{border:1px solid var(--l);border-radius:var(--r)}
label.check{display:flex;gap:.5em;align-items:baseline;margin:.3em 0}
.row{display:flex;gap:.5em;justify-content:flex-end;margin-top:1em}
.secret{display:block;padding:.5em;border:1px solid var(--l);border-radius:var(--r);
word-break:break-all;user-select:all}
.alert{color:var(--d)}
svg{vertical-align:middle;color:var(--a)}
`;
