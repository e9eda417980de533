/**
 * The JSON Schema (draft-07) of one line of the audit log's JSON Lines
 * export (`ApiKeysService.exportAuditLog`): a `record` or a `checkpoint`.
 * Hand it to a SIEM or validate a file with it (docs/operations.md, "The
 * audit log").
 *
 * @example
 * ```ts
 * import { AUDIT_EXPORT_SCHEMA } from "@saferoute/api-kit/api-keys/audit";
 *
 * const schemaFile = JSON.stringify(AUDIT_EXPORT_SCHEMA, null, 2);
 * console.log(schemaFile.includes('"checkpoint"')); // true
 * ```
 *
 * @module
 */
import { AUDIT_ACTIONS } from "./types.ts";

const HEX64 = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
const TEXT_OR_NULL = { type: ["string", "null"] } as const;
const INSTANT = { type: "string", format: "date-time" } as const;
const SEQ = { type: "integer", minimum: 1 } as const;

/** A JSON Schema (draft-07) whose root is a choice (`oneOf`) of object schemas. */
export interface AuditExportSchema {
  /** The draft the schema follows. */
  readonly $schema: string;
  /** What it describes. */
  readonly title: string;
  /** The line kinds: `record`, then `checkpoint`. */
  readonly oneOf: readonly Readonly<Record<string, unknown>>[];
}

/**
 * The JSON Schema (draft-07) of one line of `exportAuditLog`: every field
 * required, none other allowed; `JSON.stringify` it to ship it as a file.
 */
export const AUDIT_EXPORT_SCHEMA: AuditExportSchema = Object.freeze({
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "An audit log export line of @saferoute/api-kit",
  oneOf: [
    {
      title: "record",
      type: "object",
      additionalProperties: false,
      required: [
        "type",
        "v",
        "action",
        "actor",
        "keyId",
        "prefix",
        "requestId",
        "clientAddress",
        "outcome",
        "changes",
        "tenantId",
        "seq",
        "at",
        "prevHash",
        "hash",
      ],
      properties: {
        type: { const: "record" },
        v: { const: 1 },
        action: { enum: [...AUDIT_ACTIONS] },
        actor: { type: "string", minLength: 1 },
        keyId: TEXT_OR_NULL,
        prefix: TEXT_OR_NULL,
        requestId: TEXT_OR_NULL,
        clientAddress: TEXT_OR_NULL,
        outcome: { enum: ["success", "refused"] },
        changes: {
          type: "object",
          additionalProperties: {
            type: "object",
            additionalProperties: false,
            required: ["before", "after"],
            properties: { before: {}, after: {} },
          },
        },
        tenantId: { type: "string", minLength: 1 },
        seq: SEQ,
        at: INSTANT,
        prevHash: HEX64,
        hash: HEX64,
      },
    },
    {
      title: "checkpoint",
      type: "object",
      additionalProperties: false,
      required: ["type", "tenantId", "seq", "hash", "at", "mac"],
      properties: {
        type: { const: "checkpoint" },
        tenantId: { type: "string", minLength: 1 },
        seq: SEQ,
        hash: HEX64,
        at: INSTANT,
        mac: HEX64,
      },
    },
  ],
});
