/**
 * Injection tokens and route-metadata keys of the safe-response Nest module.
 *
 * @module
 */

/**
 * Injection token of the resolved, validated module settings.
 *
 * @example
 * ```ts
 * import { Inject, Injectable } from "@nestjs/common";
 * import { SAFE_RESPONSE_SETTINGS } from "@saferoute/api-kit/safe-response/nest";
 * import type { SafeResponseSettings } from "@saferoute/api-kit/safe-response";
 *
 * @Injectable()
 * class ShowsSettings {
 *   constructor(@Inject(SAFE_RESPONSE_SETTINGS) readonly settings: SafeResponseSettings) {}
 * }
 * ```
 */
export const SAFE_RESPONSE_SETTINGS = "SAFE_RESPONSE_SETTINGS";

/**
 * Metadata key of `RawResponse` (`true`) and `SafeResponse` (`false`).
 *
 * @example
 * ```ts
 * import { RAW_RESPONSE_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * RAW_RESPONSE_METADATA; // "safe-response:raw"
 * ```
 */
export const RAW_RESPONSE_METADATA = "safe-response:raw";

/**
 * Metadata key of `ResponseMessage`.
 *
 * @example
 * ```ts
 * import { RESPONSE_MESSAGE_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * RESPONSE_MESSAGE_METADATA; // "safe-response:message"
 * ```
 */
export const RESPONSE_MESSAGE_METADATA = "safe-response:message";

/**
 * Metadata key of `SuccessCode`.
 *
 * @example
 * ```ts
 * import { SUCCESS_CODE_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * SUCCESS_CODE_METADATA; // "safe-response:success-code"
 * ```
 */
export const SUCCESS_CODE_METADATA = "safe-response:success-code";

/**
 * Metadata key of `Paginated` and `CursorPaginated` (a `PaginationSetting`).
 *
 * @example
 * ```ts
 * import { PAGINATION_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * PAGINATION_METADATA; // "safe-response:pagination"
 * ```
 */
export const PAGINATION_METADATA = "safe-response:pagination";

/**
 * Metadata key of `SortMeta`.
 *
 * @example
 * ```ts
 * import { SORT_META_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * SORT_META_METADATA; // "safe-response:sort"
 * ```
 */
export const SORT_META_METADATA = "safe-response:sort";

/**
 * Metadata key of `FilterMeta`.
 *
 * @example
 * ```ts
 * import { FILTER_META_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * FILTER_META_METADATA; // "safe-response:filter"
 * ```
 */
export const FILTER_META_METADATA = "safe-response:filter";

/**
 * Metadata key of `ProblemType`.
 *
 * @example
 * ```ts
 * import { PROBLEM_TYPE_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * PROBLEM_TYPE_METADATA; // "safe-response:problem-type"
 * ```
 */
export const PROBLEM_TYPE_METADATA = "safe-response:problem-type";

/**
 * Metadata key of `Deprecated` (a validated `DeprecationPlan`).
 *
 * @example
 * ```ts
 * import { DEPRECATED_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * DEPRECATED_METADATA; // "safe-response:deprecated"
 * ```
 */
export const DEPRECATED_METADATA = "safe-response:deprecated";

/**
 * Metadata key of `SkipGlobalErrors`.
 *
 * @example
 * ```ts
 * import { SKIP_GLOBAL_ERRORS_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * SKIP_GLOBAL_ERRORS_METADATA; // "safe-response:skip-global-errors"
 * ```
 */
export const SKIP_GLOBAL_ERRORS_METADATA = "safe-response:skip-global-errors";

/**
 * Metadata key of the composites' `problemDetails` flag (checked against the
 * module option at startup).
 *
 * @example
 * ```ts
 * import { ENDPOINT_PROBLEM_DETAILS_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * ENDPOINT_PROBLEM_DETAILS_METADATA; // "safe-response:endpoint-problem-details"
 * ```
 */
export const ENDPOINT_PROBLEM_DETAILS_METADATA = "safe-response:endpoint-problem-details";

/** Nest's `@HttpCode` metadata key (stable across Nest 11 and 12). */
export const NEST_HTTP_CODE_METADATA = "__httpCode__";

/** Nest's route method metadata key (stable across Nest 11 and 12). */
export const NEST_METHOD_METADATA = "method";

/**
 * Metadata key of `FieldSelection` (validated options, or `false` for off).
 *
 * @example
 * ```ts
 * import { FIELD_SELECTION_METADATA } from "@saferoute/api-kit/safe-response/nest";
 * FIELD_SELECTION_METADATA; // "safe-response:field-selection"
 * ```
 */
export const FIELD_SELECTION_METADATA = "safe-response:field-selection";

/** Nest's `VERSION_METADATA` key of `@Version` and `@Controller({ version })` (Nest 11 and 12). */
export const NEST_VERSION_METADATA = "__version__";
