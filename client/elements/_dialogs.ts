/**
 * The fields of the create, rotate, rename and revoke dialogs, each with the
 * body it sends: built from the server's configuration (scopes, environments,
 * presets and their defaults, the limits a new key gets).
 *
 * @module
 */
import { type Child, h } from "./_dom.ts";
import { durationOf, type Format } from "./_format.ts";
import { fitsCodePoints, MAX_API_KEY_NAME_LENGTH } from "./_limits.ts";
import { fill, type KeyView, type ManagerConfig, type Preset } from "./_model.ts";
import { environmentLabel } from "./_row.ts";
import type { ApiKeysManagerStrings } from "./strings.ts";

/** A dialog's fields, the control focused first, and the body to send. */
export interface DialogFields {
  /** The form's fields. */
  fields: Child[];
  /** Focused when the dialog opens. */
  focus: HTMLElement;
  /** The request body from the fields' values. */
  body: () => Record<string, unknown>;
}

/** The expiry select's choice of a date and time instead of a preset. */
const ON_DATE = "date";

/** A `datetime-local` value (the user's local time) as an ISO instant; invalid: as typed (the server refuses it). */
function instantOf(local: string): string {
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? local : at.toISOString();
}

let ids = 0;
/** A unique id inside the shadow root. */
const id = () => `f${++ids}`;

/** A preset's label: `none`, `never`, or a duration such as `24h` in words. */
function presetLabel(s: ApiKeysManagerStrings, f: Format, { value, label }: Preset): string {
  if (label !== value) return label;
  return value === "none" ? s.presetNone : value === "never" ? s.presetNever : f.duration(value);
}

/** A labelled select of `options` (`preferred` chosen), with a live hint under it. */
function select(
  text: string,
  options: { value: string; label: string }[],
  preferred: string,
  hint?: (value: string) => string,
): { field: HTMLElement; control: HTMLSelectElement } {
  const hintId = id();
  const note = h("span", { id: hintId, class: "m small" });
  const control = h(
    "select",
    hint ? { "aria-describedby": hintId } : {},
    ...options.map(({ value, label }) =>
      h("option", { value, selected: value === preferred }, label)
    ),
  );
  const update = () => hint && (note.textContent = hint(control.value));
  control.addEventListener("change", update);
  update();
  return { field: h("label", {}, text, control, hint && note), control };
}

/**
 * A select of `presets` (`preferred` chosen) with a hint: `template` with the
 * date a duration ends, else `otherwise(value)`.
 */
function presetField(
  text: string,
  presets: Preset[],
  preferred: string,
  s: ApiKeysManagerStrings,
  f: Format,
  template: string,
  otherwise: (value: string) => string,
): { field: HTMLElement; control: HTMLSelectElement } {
  const options = presets.map((preset) => ({
    value: preset.value,
    label: presetLabel(s, f, preset),
  }));
  return select(text, options, preferred, (value) => {
    const duration = durationOf(value);
    return duration
      ? fill(template, { date: f.dateTime(new Date(Date.now() + duration.ms)) })
      : otherwise(value);
  });
}

/** A refill period (`daily`, `monthly`, `monthly:<day>`, `<ms>ms`, `30d`) in words. */
function refillPeriod(every: string, s: ApiKeysManagerStrings, f: Format): string {
  if (every === "daily") return s.refillDaily;
  if (every.startsWith("monthly")) return s.refillMonthly;
  const ms = /^(\d{1,15})ms$/.exec(every);
  return fill(s.refillEvery, { duration: ms ? f.window(Number(ms[1])) : f.duration(every) });
}

/**
 * A key name's field holding `value`: refused before submit past the server's
 * `MAX_API_KEY_NAME_LENGTH` code points (`fitsCodePoints`); `maxlength`, which
 * counts UTF-16 units, stops typing only where no name could fit (two a code point).
 */
function nameInput(s: ApiKeysManagerStrings, f: Format, value?: string): HTMLInputElement {
  const input = h("input", {
    required: true,
    maxlength: String(2 * MAX_API_KEY_NAME_LENGTH),
    autocomplete: "off",
    value,
  });
  const tooLong = fill(f.form(s.nameTooLong, MAX_API_KEY_NAME_LENGTH), {
    count: f.number(MAX_API_KEY_NAME_LENGTH),
  });
  // As the server's rule of names (api_keys/_key_name.ts): not only spaces, at most the length.
  const check = () =>
    input.setCustomValidity(
      input.value !== "" && input.value.trim() === ""
        ? s.nameBlank
        : fitsCodePoints(input.value, MAX_API_KEY_NAME_LENGTH)
        ? ""
        : tooLong,
    );
  input.addEventListener("input", check);
  check();
  return input;
}

/** The create form: name, environment, scopes, expiry, IP allowlist, and the limits shown. */
export function createFields(
  config: ManagerConfig,
  s: ApiKeysManagerStrings,
  f: Format,
): DialogFields {
  const name = nameInput(s, f);
  const environment = select(
    s.environment,
    config.environments.map((value) => ({ value, label: environmentLabel(s, value) })),
    config.environments[0] ?? "",
  );
  const boxes = config.scopes.map(({ scope, description }) => ({
    scope,
    box: h("input", { type: "checkbox", value: scope }),
    description,
  }));
  // A key has at least one scope: none ticked marks the first box, so the form is not sent.
  const checkScopes = () =>
    boxes[0]?.box.setCustomValidity(boxes.some(({ box }) => box.checked) ? "" : s.scopeRequired);
  for (const { box } of boxes) box.addEventListener("change", checkScopes);
  checkScopes();
  const expiry = presetField(
    s.expiry,
    config.expiryPresets,
    config.defaultExpiry,
    s,
    f,
    s.expiresOn,
    (value) => value === "never" ? s.neverExpires : "",
  );
  expiry.control.append(h("option", { value: ON_DATE }, s.expiryOnDate));
  const soon = new Date(Date.now() + 60_000);
  const date = h("input", {
    type: "datetime-local",
    // The local date and time a minute from now, as the field writes it.
    min: new Date(soon.getTime() - soon.getTimezoneOffset() * 60_000).toISOString().slice(0, 16),
  });
  const dateField = h("label", {}, s.expiryDate, date);
  const showDate = () => {
    const on = expiry.control.value === ON_DATE;
    dateField.hidden = !on;
    date.disabled = !on;
    date.required = on;
  };
  expiry.control.addEventListener("change", showDate);
  showDate();

  const hintId = id();
  const ips = h("textarea", { rows: "2", autocomplete: "off", "aria-describedby": hintId });
  const limits = config.limits;
  const credits = limits?.credits;
  const limitLines = [
    ...(limits?.policies ?? []).map((policy) =>
      fill(f.form(s.policy, policy.limit), {
        limit: f.number(policy.limit),
        window: f.window(policy.windowMs),
      })
    ),
    ...(credits
      ? [
        fill(
          f.form(
            credits.sharedBy === "tenant" ? s.creditsStartShared : s.creditsStart,
            credits.amount,
          ),
          { amount: f.number(credits.amount) },
        ) +
        (credits.refillAmount !== null && credits.refillEvery
          ? `, ${
            fill(f.form(s.creditsRefillEvery, credits.refillAmount), {
              amount: f.number(credits.refillAmount),
              every: refillPeriod(credits.refillEvery, s, f),
            })
          }`
          : ""),
      ]
      : []),
  ];
  return {
    fields: [
      h("label", {}, s.name, name),
      config.environments.length > 1 && environment.field,
      boxes.length > 0 &&
      h(
        "fieldset",
        {},
        h("legend", {}, s.scopes),
        ...boxes.map(({ scope, box, description }) =>
          h(
            "label",
            { class: "check" },
            box,
            h(
              "span",
              {},
              h("code", {}, scope),
              description && h("span", { class: "m" }, description),
            ),
          )
        ),
      ),
      expiry.field,
      dateField,
      h(
        "label",
        {},
        s.ipAllowlist,
        ips,
        h("span", { id: hintId, class: "m small" }, s.ipAllowlistHint),
      ),
      limitLines.length > 0 &&
      h(
        "div",
        { class: "limits", part: "limits" },
        h("h4", {}, s.limits),
        h("ul", {}, ...limitLines.map((line) => h("li", {}, line))),
      ),
    ],
    focus: name,
    body: () => {
      const allowedIpCidrs = ips.value.split(/[\s,]+/).filter((part) => part !== "");
      return {
        name: name.value,
        environment: environment.control.value || undefined,
        scopes: boxes.filter(({ box }) => box.checked).map(({ scope }) => scope),
        ...(expiry.control.value === ON_DATE
          ? { expiresAt: instantOf(date.value) }
          : { expiresIn: expiry.control.value }),
        ...(allowedIpCidrs.length > 0 ? { allowedIpCidrs } : {}),
      };
    },
  };
}

/** The rotate form: the grace preset (the server's default chosen) and when the old key stops. */
export function rotateFields(
  config: ManagerConfig,
  s: ApiKeysManagerStrings,
  f: Format,
): DialogFields {
  const grace = presetField(
    s.grace,
    config.gracePresets,
    config.defaultGrace,
    s,
    f,
    s.graceUntil,
    () => s.graceNow,
  );

  return {
    fields: [grace.field],
    focus: grace.control,
    body: () => ({ grace: grace.control.value }),
  };
}

/** The rename form. */
export function renameFields(key: KeyView, s: ApiKeysManagerStrings, f: Format): DialogFields {
  const name = nameInput(s, f, key.name);
  return {
    fields: [h("label", {}, s.name, name)],
    focus: name,
    body: () => ({ name: name.value }),
  };
}

/**
 * A name as a page shows it: composed (NFC), each run of the white space a page collapses (space,
 * tab, line breaks, form feed: never a no-break or other Unicode space) one space, none at the ends.
 */
const shown = (name: string) =>
  name.normalize("NFC").replace(/[ \t\n\r\f]+/g, " ").replace(/^ | $/g, "");

/**
 * The revoke confirmation: the prompt quoting the name as a text field can
 * hold it (each line break a space: a name stored before they were refused),
 * the field, and whether it holds that name as the prompt shows it (`shown`:
 * a run of spaces renders as one, so typing what is seen confirms).
 */
export function revokeFields(
  key: KeyView,
  s: ApiKeysManagerStrings,
): DialogFields & { confirmed: () => boolean } {
  const typed = h("input", { autocomplete: "off", "aria-describedby": "dd" });
  const name = key.name.replace(/\r\n?|\n/g, " ");
  return {
    fields: [
      h("p", { id: "dd", class: "wrap" }, fill(s.revokePrompt, { name })),
      h("label", {}, s.name, typed),
    ],
    focus: typed,
    confirmed: () => shown(typed.value) === shown(name),
    body: () => ({}),
  };
}
