/**
 * The per-route plan: every decorator's setting read once from the handler
 * and its controller, then cached by the runtime.
 *
 * @module
 */
import { type ExecutionContext, RequestMethod, type VersioningOptions } from "@nestjs/common";
import type { Reflector } from "@nestjs/core";
import type { DeprecationPlan } from "../deprecation_headers.ts";
import {
  type FieldSelectionOptions,
  type FieldSelectionSettings,
  resolveFieldSelection,
} from "../field_selection.ts";
import type { SafeResponseSettings } from "../settings.ts";
import { readRouteVersion } from "./api-version.ts";
import type { PaginationSetting } from "./paginated.decorator.ts";
import {
  DEPRECATED_METADATA,
  ENDPOINT_PROBLEM_DETAILS_METADATA,
  FIELD_SELECTION_METADATA,
  FILTER_META_METADATA,
  NEST_HTTP_CODE_METADATA,
  NEST_METHOD_METADATA,
  PAGINATION_METADATA,
  PROBLEM_TYPE_METADATA,
  RAW_RESPONSE_METADATA,
  RESPONSE_MESSAGE_METADATA,
  SORT_META_METADATA,
  SUCCESS_CODE_METADATA,
} from "./safe-response.constants.ts";

/** A controller class, as `ExecutionContext.getClass()` returns it. */
export type RouteController = ReturnType<ExecutionContext["getClass"]>;

/** A route handler, as `ExecutionContext.getHandler()` returns it. */
export type RouteHandler = ReturnType<ExecutionContext["getHandler"]>;

/** Settings of one route. */
export interface RoutePlan {
  /** `Controller.handler`, for warnings. */
  readonly route: string;
  /** `RawResponse`: no success envelope. */
  readonly raw: boolean;
  /** Status Nest sends by default (`@HttpCode`, else 201 for POST, else 200). */
  readonly statusCode: number;
  /** `SuccessCode`, else the mapper's code for {@link statusCode}. */
  readonly successCode?: string;
  /** Whether {@link successCode} came from `SuccessCode` (independent of the status). */
  readonly fixedCode: boolean;
  /** `ResponseMessage`. */
  readonly message?: string;
  /** `Paginated`/`CursorPaginated`. */
  readonly pagination?: PaginationSetting;
  /** `SortMeta`. */
  readonly sort: boolean;
  /** `FilterMeta`. */
  readonly filter: boolean;
  /** `ProblemType`. */
  readonly problemType?: string;
  /** `Deprecated`. */
  readonly deprecation?: DeprecationPlan;
  /** The composites' `problemDetails` flag, when set. */
  readonly endpointProblemDetails?: boolean;
  /** Field selection (`FieldSelection` over the module option), when on. */
  readonly fieldSelection?: FieldSelectionSettings;
  /** `meta.apiVersion` unless the request decides: the route's Nest version, else a string `version`. */
  readonly apiVersion?: string;
  /** The route's Nest versions, when several (the request picks one). */
  readonly versions?: readonly string[];
  /** Keys of warnings already logged for this route. */
  readonly warned: Set<string>;
}

/** Reads the plan of `handler` on `controller`; `successCodeOf` is the mapper's code of a status. */
export function readRoutePlan(
  reflector: Reflector,
  controller: RouteController,
  handler: RouteHandler,
  settings: SafeResponseSettings,
  successCodeOf: (statusCode: number) => string | undefined,
  versioning?: VersioningOptions,
): RoutePlan {
  const targets = [handler, controller];
  const get = <T>(key: string): T | undefined => reflector.getAllAndOverride<T>(key, targets);
  const method = reflector.get<RequestMethod>(NEST_METHOD_METADATA, handler);
  const statusCode = reflector.get<number>(NEST_HTTP_CODE_METADATA, handler) ??
    (method === RequestMethod.POST ? 201 : 200);
  const fixed = reflector.get<string>(SUCCESS_CODE_METADATA, handler);
  const selection = get<FieldSelectionOptions | false>(FIELD_SELECTION_METADATA);
  const version = readRouteVersion(reflector, targets, versioning);
  const fallbackVersion = typeof settings.version === "string" ? settings.version : undefined;
  return {
    route: `${controller.name}.${handler.name}`,
    raw: get<boolean>(RAW_RESPONSE_METADATA) === true,
    statusCode,
    successCode: fixed ?? successCodeOf(statusCode),
    fixedCode: fixed !== undefined,
    message: get<string>(RESPONSE_MESSAGE_METADATA),
    pagination: get<PaginationSetting>(PAGINATION_METADATA),
    sort: get<boolean>(SORT_META_METADATA) === true,
    filter: get<boolean>(FILTER_META_METADATA) === true,
    problemType: get<string>(PROBLEM_TYPE_METADATA),
    deprecation: get<DeprecationPlan>(DEPRECATED_METADATA),
    endpointProblemDetails: get<boolean>(ENDPOINT_PROBLEM_DETAILS_METADATA),
    fieldSelection: selection === undefined
      ? settings.fieldSelection
      : resolveFieldSelection(selection, "FieldSelection options", settings.fieldSelection),
    apiVersion: typeof version === "string" ? version : fallbackVersion,
    versions: typeof version === "object" ? version : undefined,
    warned: new Set(),
  };
}
