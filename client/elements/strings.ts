/**
 * The visible and announced strings of `<api-keys-manager>`, replaceable one
 * by one through its `i18n` property. `{name}` and `{count}` are filled in.
 *
 * @module
 */

/**
 * Every string the element shows or announces.
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
  /** Button opening the create form, and its heading. */
  create: string;
  /** Column and field: the key's name. */
  name: string;
  /** Column: the key's prefix. */
  prefix: string;
  /** Column and field: the environment. */
  environment: string;
  /** Column and fieldset: the scopes. */
  scopes: string;
  /** Field: the expiry preset. */
  expiry: string;
  /** Expiry preset `never`. */
  presetNever: string;
  /** Grace preset `none`: the old key stops at once. */
  presetNone: string;
  /** Column: the creation date. */
  created: string;
  /** Column: the last use. */
  lastUsed: string;
  /** Last use of a key never used. */
  neverUsed: string;
  /** Column: usage over the last 24 hours. */
  usage: string;
  /** Accessible name of the usage chart. */
  usageLabel: string;
  /** Column: remaining credits. */
  credits: string;
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
  /** Column: the row's actions. */
  actions: string;
  /** Heading of the secret's reveal. */
  revealTitle: string;
  /** The reveal's warning. */
  revealWarning: string;
  /** Copy button. */
  copy: string;
  /** Announced after a copy. */
  copied: string;
  /** Announced when the clipboard refuses. */
  copyFailed: string;
  /** Closes the reveal. */
  done: string;
  /** Closes a dialog without acting. */
  cancel: string;
  /** Rotate button and heading. */
  rotate: string;
  /** Field: how long the old key keeps working. */
  grace: string;
  /** Revoke button and heading. */
  revoke: string;
  /** The revoke confirmation's prompt. */
  revokePrompt: string;
  /** Announced after a revocation. */
  revoked: string;
  /** Rename button and heading. */
  rename: string;
  /** Saves a rename. */
  save: string;
  /** Prefix of an error message. */
  error: string;
  /** Retries loading. */
  retry: string;
}

/**
 * The English defaults.
 */
export const API_KEYS_MANAGER_STRINGS: Readonly<ApiKeysManagerStrings> = Object.freeze({
  title: "API keys",
  loading: "Loading…",
  empty: "No API keys yet.",
  create: "Create key",
  name: "Name",
  prefix: "Prefix",
  environment: "Environment",
  scopes: "Scopes",
  expiry: "Expires",
  presetNever: "Never",
  presetNone: "None: the old key stops at once",
  created: "Created",
  lastUsed: "Last used",
  neverUsed: "Never used",
  usage: "Last 24 hours",
  usageLabel: "{count} requests in the last 24 hours",
  credits: "Credits",
  status: "Status",
  statusActive: "Active",
  statusRotating: "Rotating",
  statusExpired: "Expired",
  statusRevoked: "Revoked",
  expiresSoon: "Expires soon",
  actions: "Actions",
  revealTitle: "Your new API key",
  revealWarning: "Copy it now: you will not see this again.",
  copy: "Copy",
  copied: "Copied",
  copyFailed: "Copy failed: select the key and copy it.",
  done: "Done",
  cancel: "Cancel",
  rotate: "Rotate",
  grace: "Old key keeps working for",
  revoke: "Revoke",
  revokePrompt: "Type {name} to confirm. Apps using this key will stop working.",
  revoked: "Revoked",
  rename: "Rename",
  save: "Save",
  error: "Something went wrong:",
  retry: "Retry",
});
