/**
 * The visible and announced strings of `<api-keys-manager>`, replaceable one
 * by one through its `i18n` property. `{name}`, `{count}` and the other
 * placeholders are filled in; a string with a number in it may have a form per
 * plural category of the page's language (`PluralString`).
 *
 * @module
 */

/**
 * The forms of a string with a number in it, by the number's plural category
 * in the page's language (`Intl.PluralRules`, `<html lang>`): `other` for
 * every category without a form of its own.
 */
export interface PluralForms {
  /** Zero, in languages that have this category (Arabic, Welsh, ...). */
  zero?: string;
  /** One, e.g. English `1 request`. */
  one?: string;
  /** Two, in languages that have this category. */
  two?: string;
  /** Few, e.g. Polish or Russian `2–4`. */
  few?: string;
  /** Many, e.g. Polish or Russian `5–20`. */
  many?: string;
  /** Every other number, e.g. English `0 requests`, `2 requests`. */
  other: string;
}

/**
 * A string with a number in it: one for every number, or a form per plural
 * category (`PluralForms`).
 *
 * @example
 * ```ts
 * import type { PluralString } from "./strings.ts";
 * const usageTotal: PluralString = { one: "{count} requête", other: "{count} requêtes" };
 * ```
 */
export type PluralString = string | PluralForms;

/**
 * Every string the element shows or announces, error messages included.
 *
 * @example
 * ```ts
 * const french: Partial<ApiKeysManagerStrings> = { title: "Clés d'API", neverUsed: "Jamais utilisée" };
 * ```
 */
export interface ApiKeysManagerStrings {
  /** Heading of the element. */
  title: string;
  /** Shown while the keys load. */
  loading: string;
  /** Shown when the tenant has no keys. */
  empty: string;
  /** Shown when no key matches the search or filters. */
  noMatch: string;
  /** Button opening the create form, and its heading. */
  create: string;
  /** Search field (name or prefix). */
  search: string;
  /** Status filter: every key but the revoked ones (the default). */
  filterAll: string;
  /** Status filter: every key, revoked ones included. */
  filterEverything: string;
  /** Environment filter: both. */
  environmentAll: string;
  /** The sort control. */
  sort: string;
  /** Sort: newest first (the default). */
  sortNewest: string;
  /** Sort: oldest first. */
  sortOldest: string;
  /** Sort: by name. */
  sortName: string;
  /** Sort: most recently used first (never used last). */
  sortLastUsed: string;
  /** Previous page. */
  previous: string;
  /** Next page. */
  next: string;
  /** Column and field: the key's name. */
  name: string;
  /** A name field holding more than the server takes: `{count}` characters at most (plural of it). */
  nameTooLong: PluralString;
  /** A name field holding spaces only, which the server refuses. */
  nameBlank: string;
  /** The create form's scopes with none ticked (a key has at least one). */
  scopeRequired: string;
  /** Column: name, prefix, environment and scopes. */
  key: string;
  /** Column and field: the environment. */
  environment: string;
  /** Environment `live`. */
  environmentLive: string;
  /** Environment `test`. */
  environmentTest: string;
  /** Column and fieldset: the scopes. */
  scopes: string;
  /** Field: the expiry preset. */
  expiry: string;
  /** Expiry line: `{when}` relative, `{date}` absolute. */
  expiresAt: string;
  /** Expired line: `{when}` relative, `{date}` absolute. */
  expiredAt: string;
  /** Line of a rotating key: when it stops. */
  stopsAt: string;
  /** Expiry of a key without one. */
  neverExpires: string;
  /** Expiry preset `never`. */
  presetNever: string;
  /** Grace preset `none`: the old key stops at once. */
  presetNone: string;
  /** Field: allowed addresses. */
  ipAllowlist: string;
  /** Hint under the allowlist field. */
  ipAllowlistHint: string;
  /** Heading of the limits a new key gets. */
  limits: string;
  /** A rate-limit policy: `{limit}` requests per `{window}` (plural of `{limit}`). */
  policy: PluralString;
  /** Credits of a new key: `{amount}` (plural of `{amount}`). */
  creditsStart: PluralString;
  /** Credits of a new key on the tenant's shared pool: `{amount}` (plural of `{amount}`). */
  creditsStartShared: PluralString;
  /** Refill of a new key's credits: `{amount}` (plural of it), `{every}` one of the three below. */
  creditsRefillEvery: PluralString;
  /** Refill period `daily`. */
  refillDaily: string;
  /** Refill period `monthly` (or on a day of the month). */
  refillMonthly: string;
  /** Refill period of a duration: `{duration}`. */
  refillEvery: string;
  /** Column: the creation time. */
  created: string;
  /** Column: the last use. */
  lastUsed: string;
  /** Last use of a key never used. */
  neverUsed: string;
  /** Column: usage over the last 24 hours. */
  usage: string;
  /** Accessible name of the usage chart: `{count}` requests (plural of `{count}`). */
  usageLabel: PluralString;
  /** Visible 24-hour total: `{count}` (plural of it). */
  usageTotal: PluralString;
  /** One hour's usage: `{time}` (start) and `{count}` (plural of `{count}`). */
  usageHour: PluralString;
  /** Column: remaining credits. */
  credits: string;
  /** Remaining credits: `{count}` (plural of it). */
  creditsLeft: PluralString;
  /** Next refill: `{amount}` credits (plural of `{amount}`), `{when}`. */
  creditsRefill: PluralString;
  /** A key spending the tenant's pool. */
  creditsShared: string;
  /** The tenant's pool: `{count}` remaining (plural of `{count}`). */
  pool: PluralString;
  /** Column: status. */
  status: string;
  /** Status `active`. */
  statusActive: string;
  /** Status `rotating`. */
  statusRotating: string;
  /** Status `expired`. */
  statusExpired: string;
  /** Status `revoked`. */
  statusRevoked: string;
  /** Badge of a key expiring within 7 days. */
  expiresSoon: string;
  /** Note of a rotating key: its successor's `{prefix}`. */
  replacedBy: string;
  /** Note of a rotated key's successor: the old `{prefix}`. */
  replaces: string;
  /** Column: the row's actions, and the button showing them. */
  actions: string;
  /** Accessible name of a row's actions button. */
  actionsFor: string;
  /** Accessible name of an action: `{action}` on `{name}` (`{prefix}`). */
  actionLabel: string;
  /** Heading of the secret's reveal. */
  revealTitle: string;
  /** Heading of the secret's reveal, naming the key (`{name}`). */
  revealNamed: string;
  /** The reveal's warning. */
  revealWarning: string;
  /** The reveal after a rotation: `{prefix}` of the old key and `{when}` it stops. */
  revealRotated: string;
  /** Copy button. */
  copy: string;
  /** Shown after a copy. */
  copied: string;
  /** Shown when the clipboard refuses. */
  copyFailed: string;
  /** Asked when Done is pressed before a successful copy. */
  confirmClose: string;
  /** Closes the reveal without a copy. */
  closeAnyway: string;
  /** Closes the reveal. */
  done: string;
  /** Closes a dialog without acting. */
  cancel: string;
  /** Rotate button and heading. */
  rotate: string;
  /** Field: how long the old key keeps working. */
  grace: string;
  /** Line under the grace field: `{date}` the old key stops. */
  graceUntil: string;
  /** Line under the grace field with no grace. */
  graceNow: string;
  /** Line under the expiry field: `{date}`. */
  expiresOn: string;
  /** The expiry choice that shows the date and time field. */
  expiryOnDate: string;
  /** Field: the expiry date and time (the user's time zone). */
  expiryDate: string;
  /** Revoke button and heading. */
  revoke: string;
  /** The revoke confirmation's prompt: `{name}` quoted. */
  revokePrompt: string;
  /** Announced after a revocation. */
  revoked: string;
  /** Announced after revoking a key rotated elsewhere: its successor `{prefix}` still works. */
  revokedSuccessor: string;
  /** Announced after a rotation. */
  rotated: string;
  /** Announced after a creation. */
  keyCreated: string;
  /** A create answered by no one (a timeout), unreadably, or by a gateway: the key may exist. */
  createUnsure: string;
  /** The create form's button after `createUnsure`: sending again makes another key. */
  createAgain: string;
  /** A rotate answered by no one (a timeout), unreadably, or by a gateway: the key may be rotated. */
  rotateUnsure: string;
  /** A create or rotate answered without the new key's secret: the key exists, its secret lost. */
  errorNoSecret: string;
  /** Announced after a rename. */
  renamed: string;
  /** Rename button and heading. */
  rename: string;
  /** Saves a rename. */
  save: string;
  /** A rename refused: the key was renamed elsewhere since the list loaded (its row shows its name now). */
  renameConflict: string;
  /** Beside a list that may be out of date after an error. */
  stale: string;
  /** Any other error. */
  error: string;
  /** 401: the session ended. */
  errorUnauthenticated: string;
  /** 403: no permission. */
  errorForbidden: string;
  /** The server refused the request as cross-site. */
  errorCsrf: string;
  /** The server could not be reached. */
  errorNetwork: string;
  /** A 5xx or unreadable answer. */
  errorServer: string;
  /** The key no longer exists. */
  errorNotFound: string;
  /** The key cannot be rotated. */
  errorNotRotatable: string;
  /** The new key would exceed the caller's own access. */
  errorEscalation: string;
  /** A field was refused. */
  errorInvalid: string;
  /** 429 without a readable `Retry-After`. */
  errorRateLimited: string;
  /** 429 with `Retry-After`: `{when}` is when, e.g. "in 30 seconds". */
  errorRetryAfter: string;
  /** A list's load refused with 429 and `Retry-After` of at most a minute, loaded again `{when}`. */
  errorRetrying: string;
  /** 501: the server does not offer this (e.g. no audit log). */
  errorUnavailable: string;
  /** Activity button and heading (the audit log). */
  activity: string;
  /** Activity view: no records. */
  activityEmpty: string;
  /** Activity column: when. */
  activityWhen: string;
  /** Activity column: who. */
  activityWho: string;
  /** Activity column: what. */
  activityWhat: string;
  /** Activity column: which key. */
  activityKey: string;
  /** Activity of no one key (tenant-wide). */
  activityTenant: string;
  /** Loads the next page of activity. */
  loadMore: string;
  /** Closes the Activity view. */
  close: string;
  /** Actor `system`: the library's own jobs. */
  actorSystem: string;
  /** A refused attempt: `{action}`. */
  auditRefused: string;
  /** Audit action `key.created`. */
  auditCreated: string;
  /** Audit action `key.imported`. */
  auditImported: string;
  /** Audit action `key.rotated`. */
  auditRotated: string;
  /** Audit action `key.revoked`. */
  auditRevoked: string;
  /** Audit action `key.renamed`. */
  auditRenamed: string;
  /** Audit action `key.credits_updated`. */
  auditCreditsUpdated: string;
  /** Audit action `key.expiring`. */
  auditExpiring: string;
  /** Audit action `key.rotation_completed`. */
  auditRotationCompleted: string;
  /** Audit action `key.exposed`. */
  auditExposed: string;
  /** Retries loading (the list, or Activity's first page). */
  retry: string;
}

/** The strings with a number in them (`PluralString`): the ones that take plural forms. */
export const COUNTED_STRINGS: ReadonlySet<keyof ApiKeysManagerStrings> = new Set([
  "policy",
  "creditsStart",
  "creditsStartShared",
  "creditsRefillEvery",
  "usageLabel",
  "usageTotal",
  "usageHour",
  "creditsLeft",
  "creditsRefill",
  "pool",
  "nameTooLong",
]);

/** The name of a string of the element without a number in it (a message, a label). */
export type TextName = {
  [K in keyof ApiKeysManagerStrings]: ApiKeysManagerStrings[K] extends string ? K : never;
}[keyof ApiKeysManagerStrings];

/** An English string with a number in it: its `one` and `other` forms (frozen). */
const english = (one: string, other: string): PluralForms => Object.freeze({ one, other });

/**
 * The English defaults.
 */
export const API_KEYS_MANAGER_STRINGS: Readonly<ApiKeysManagerStrings> = Object.freeze({
  title: "API keys",
  loading: "Loading…",
  empty: "No API keys yet.",
  noMatch: "No keys match the search and filters.",
  create: "Create key",
  search: "Search by name or prefix",
  filterAll: "All but revoked",
  filterEverything: "All, revoked included",
  environmentAll: "All environments",
  sort: "Sort",
  sortNewest: "Newest first",
  sortOldest: "Oldest first",
  sortName: "Name (A to Z)",
  sortLastUsed: "Recently used",
  previous: "Previous",
  next: "Next",
  name: "Name",
  nameTooLong: english("Use at most {count} character.", "Use at most {count} characters."),
  nameBlank: "Use at least one character other than a space.",
  scopeRequired: "Choose at least one scope.",
  key: "Key",
  environment: "Environment",
  environmentLive: "Live",
  environmentTest: "Test",
  scopes: "Scopes",
  expiry: "Expires",
  expiresAt: "Expires {when} ({date})",
  expiredAt: "Expired {when} ({date})",
  stopsAt: "Stops {when} ({date})",
  neverExpires: "Never expires",
  presetNever: "Never",
  presetNone: "None: the old key stops at once",
  ipAllowlist: "IP allowlist",
  ipAllowlistHint: "Addresses or CIDR ranges, one per line. Empty: any address.",
  limits: "Limits of the new key",
  policy: english("{limit} request per {window}", "{limit} requests per {window}"),
  creditsStart: english("{amount} credit", "{amount} credits"),
  creditsStartShared: english(
    "{amount} credit, shared by all your keys",
    "{amount} credits, shared by all your keys",
  ),
  creditsRefillEvery: "refilled with {amount} {every}",
  refillDaily: "daily",
  refillMonthly: "monthly",
  refillEvery: "every {duration}",
  created: "Created",
  lastUsed: "Last used",
  neverUsed: "Never used",
  usage: "Last 24 hours",
  usageLabel: english(
    "{count} request in the last 24 hours",
    "{count} requests in the last 24 hours",
  ),
  usageTotal: english("{count} request", "{count} requests"),
  usageHour: english("{time}: {count} request", "{time}: {count} requests"),
  credits: "Credits",
  creditsLeft: "{count} left",
  creditsRefill: "+{amount} {when}",
  creditsShared: "Shared pool",
  pool: "Shared credits: {count} left",
  status: "Status",
  statusActive: "Active",
  statusRotating: "Rotating",
  statusExpired: "Expired",
  statusRevoked: "Revoked",
  expiresSoon: "Expires soon",
  replacedBy: "Replaced by {prefix}",
  replaces: "Replaces {prefix}",
  actions: "Actions",
  actionsFor: "Actions for {name} ({prefix})",
  actionLabel: "{action} {name} ({prefix})",
  revealTitle: "Your new API key",
  revealNamed: "Your new API key “{name}”",
  revealWarning: "Copy it now: you will not see this again.",
  revealRotated: "The old key {prefix} keeps working until {when}.",
  copy: "Copy",
  copied: "Copied to the clipboard.",
  copyFailed:
    "Copy failed. The key is selected: press Ctrl+C (⌘C on a Mac) to copy it, then store it safely.",
  confirmClose: "You have not copied the key. Close anyway? You will not see it again.",
  closeAnyway: "Close without copying",
  done: "Done",
  cancel: "Cancel",
  rotate: "Rotate",
  grace: "Old key keeps working for",
  graceUntil: "The old key stops on {date}.",
  graceNow: "The old key stops at once.",
  expiresOn: "The key expires on {date}.",
  expiryOnDate: "On a date…",
  expiryDate: "Expiry date and time",
  revoke: "Revoke",
  revokePrompt: "Type the name “{name}” to confirm. Apps using this key stop working.",
  revoked: "Key revoked",
  revokedSuccessor:
    "Key revoked. Its successor {prefix} is still active: revoke it too if the key was exposed.",
  rotated: "Key rotated",
  keyCreated: "Key created",
  createUnsure:
    "The server did not answer, so the key may have been created: the list is loaded again; revoke any key there you do not recognise. Creating again makes another key.",
  createAgain: "Create another key",
  rotateUnsure:
    "The server did not answer, so the key may have been rotated: the list is loaded again. If a new key replaces it there, its secret was never shown: revoke that key and create another.",
  errorNoSecret:
    "The server did not send the new key's secret, so it cannot be shown: revoke the new key and create another.",
  renamed: "Key renamed",
  rename: "Rename",
  save: "Save",
  renameConflict:
    "This key was renamed elsewhere: its row shows its current name. Save again to replace it.",
  stale: "This list may be out of date; its actions are off until it reloads.",
  error: "Something went wrong. Try again.",
  errorUnauthenticated: "Your session has ended. Sign in again to manage your API keys.",
  errorForbidden: "You do not have permission to manage these API keys.",
  errorCsrf: "The request was refused for security reasons. Reload the page and try again.",
  errorNetwork: "The server could not be reached. Check your connection and try again.",
  errorServer: "The server had a problem. Try again in a moment.",
  errorNotFound: "This key no longer exists. Reload the list.",
  errorNotRotatable: "This key cannot be rotated: it is already rotating, expired or revoked.",
  errorEscalation:
    "You cannot create or rotate a key with more access or fewer limits than your own.",
  errorInvalid: "Some values were not accepted. Check the form and try again.",
  errorRateLimited: "Too many requests. Wait a moment and try again.",
  errorRetryAfter: "Too many requests. Try again {when}.",
  errorRetrying: "Too many requests. Trying again {when}.",
  errorUnavailable: "This server does not offer this.",
  activity: "Activity",
  activityEmpty: "No activity yet.",
  activityWhen: "When",
  activityWho: "Who",
  activityWhat: "What",
  activityKey: "Key",
  activityTenant: "All keys",
  loadMore: "Load more",
  close: "Close",
  actorSystem: "System",
  auditRefused: "{action} (refused)",
  auditCreated: "Created",
  auditImported: "Imported",
  auditRotated: "Rotated",
  auditRevoked: "Revoked",
  auditRenamed: "Renamed",
  auditCreditsUpdated: "Credits changed",
  auditExpiring: "Expiry notice sent",
  auditRotationCompleted: "Rotation completed",
  auditExposed: "Reported exposed",
  retry: "Retry",
});
