/**
 * Injection tokens of the demo app.
 *
 * @module
 */

/** The `ApiKeyStorage` the key service uses (the admin routes read records from it). */
export const DEMO_KEY_STORAGE = "DEMO_KEY_STORAGE";

/** The web page's `PageAssets`. */
export const DEMO_PAGE_ASSETS = "DEMO_PAGE_ASSETS";

/** The page's `PageSession` (its `<api-keys-manager>` token). */
export const DEMO_PAGE_SESSION = "DEMO_PAGE_SESSION";

/** The `LeakReportLimiter` of the public leak-report route. */
export const DEMO_LEAK_REPORT_LIMITER = "DEMO_LEAK_REPORT_LIMITER";
