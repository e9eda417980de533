/**
 * Everything the scenario apps import from the library, in one place: from
 * the repository's sources here; a consumer app's copy of this folder
 * replaces this one file with the same names from `@saferoute/api-kit/...`.
 *
 * @module
 */
export {
  type ApiKeyContext,
  ApiKeysService,
  generateKey,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
export {
  ApiKeysGuard,
  ApiKeysModule,
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "../../api_keys/nest/mod.ts";
export { createApiKeyAuthorizer, getApiKeyContext } from "../../api_keys/fetch/mod.ts";
export { defineErrors, SafeException } from "../../safe_response/mod.ts";
export {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeResponseModule,
  SortMeta,
  SuccessCode,
} from "../../safe_response/nest/mod.ts";
export { createSafeFetch, type SafeFetch } from "../../safe_response/fetch/mod.ts";
