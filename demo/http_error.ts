/**
 * An HTTP error of the demo's own, framework-free: the shape the
 * safe-response core reads from any thrown value (`getStatus()` and
 * `getResponse()`, as Nest's `HttpException`), so both demo servers (Nest,
 * and the Fetch one in `demo/fetch/`) answer it the same way.
 *
 * @module
 */

/** The body of a {@link DemoHttpError}: its code, client-safe message and details. */
export interface DemoHttpErrorBody {
  /** Machine-readable code (`error.code`). */
  code: string;
  /** Client-safe message. */
  message: string;
  /** Extra data for the client (`error.details`). */
  details?: unknown;
}

/**
 * A 4xx answer thrown by the demo's shared code.
 *
 * @example
 * ```ts
 * import { DemoHttpError } from "./http_error.ts";
 * throw new DemoHttpError(400, { code: "INVALID_CURSOR", message: "unknown cursor" });
 * ```
 */
export class DemoHttpError extends Error {
  readonly #status: number;
  readonly #body: DemoHttpErrorBody;

  /** An error answering `status` with `body`. */
  constructor(status: number, body: DemoHttpErrorBody) {
    super(body.message);
    this.name = "DemoHttpError";
    this.#status = status;
    this.#body = body;
  }

  /** The HTTP status. */
  getStatus(): number {
    return this.#status;
  }

  /** The body the safe-response core reads `code`, `message` and `details` from. */
  getResponse(): DemoHttpErrorBody {
    return this.#body;
  }
}
