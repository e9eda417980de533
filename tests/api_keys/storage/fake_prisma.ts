/** A small in-test object behaving like a Prisma `apiKey` delegate (with `$transaction`). */
import type { PrismaApiKeyClient, PrismaApiKeyDelegate } from "../../../api_keys/mod.ts";
import { plus } from "../../../api_keys/metering/_usage_counts.ts";

type Row = Record<string, unknown>;

class PrismaKnownRequestError extends Error {
  code = "P2025";
  constructor() {
    super(
      "An operation failed because it depends on one or more records that were required but not found.",
    );
  }
}

function clone(row: Row): Row {
  return structuredClone(row);
}

/** A field reference (`delegate.fields.x`): an operand naming another column of the row. */
class FieldRef {
  constructor(readonly name: string) {}
}

/** A comparable form of a column value (dates as epoch ms, bigints as numbers). */
function comparable(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "bigint") return Number(value);
  return value;
}

/** Whether `text` matches the SQL LIKE `pattern` (`%`, `_`, `\\` escapes), as Prisma's operators run. */
function like(text: string, pattern: string): boolean {
  const source = pattern.replace(
    /\\(.)|([%_])|([^\\%_]+)/gs,
    (_, escaped: string | undefined, wildcard: string | undefined, plain: string | undefined) =>
      escaped !== undefined
        ? escaped.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        : wildcard === "%"
        ? ".*"
        : wildcard === "_"
        ? "."
        : plain!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
  );
  return new RegExp(`^${source}$`, "s").test(text);
}

/**
 * Whether a column value of `row` meets one `where` condition: equality, null,
 * or `gt`/`gte`/`lt`/`lte` (of a value or of a `FieldRef`, false against
 * NULL as in SQL), `not: null`, `in`, `startsWith`, `contains` (with `mode:
 * "insensitive"`: lower-cased both).
 */
function meets(actual: unknown, condition: unknown, row: Row): boolean {
  if (condition === null) return actual === null || actual === undefined;
  if (typeof condition === "object" && !(condition instanceof Date)) {
    if (actual === null || actual === undefined) return false;
    const a = comparable(actual) as number | string;
    const { mode, ...operators } = condition as Record<string, unknown>;
    const fold = (text: string) => mode === "insensitive" ? text.toLowerCase() : text;
    return Object.entries(operators).every(([operator, given]) => {
      const operand = given instanceof FieldRef ? row[given.name] ?? null : given;
      if (given instanceof FieldRef && operand === null) return false;
      const b = comparable(operand) as number | string;
      switch (operator) {
        case "not":
          if (operand !== null) throw new Error("fake Prisma: only not: null");
          return true;
        case "in":
          return (operand as unknown[]).includes(actual);
        case "startsWith":
          return like(String(a), `${b}%`);
        case "contains":
          return like(fold(String(a)), `%${fold(String(b))}%`);
        case "gt":
          return a > b;
        case "gte":
          return a >= b;
        case "lt":
          return a < b;
        case "lte":
          return a <= b;
        default:
          throw new Error(`fake Prisma: unsupported operator ${operator}`);
      }
    });
  }
  return comparable(actual) === comparable(condition);
}

function matches(row: Row, where: Record<string, unknown>): boolean {
  return Object.entries(where).every(([field, value]) => {
    if (field === "OR") return (value as Record<string, unknown>[]).some((w) => matches(row, w));
    if (field === "AND") return (value as Record<string, unknown>[]).every((w) => matches(row, w));
    return meets(row[field], value, row);
  });
}

function uniqueViolation(): Error {
  return Object.assign(new Error("Unique constraint failed"), { code: "P2002" });
}

/**
 * A delegate over its own rows keyed by `key` (like `apiKeyExpiryNotice` or
 * `apiKeyRotationWait`): `create` (P2002 on a taken key), `createMany` with
 * `skipDuplicates`, `updateMany` (answering counts), `findUnique`.
 */
export function fakeKeyedDelegate(key: string) {
  const rows: Row[] = [];
  return {
    rows,
    async create({ data }: { data: Row }) {
      await tick();
      if (rows.some((row) => row[key] === data[key])) throw uniqueViolation();
      rows.push(clone(data));
      return clone(data);
    },
    async createMany({ data }: { data: Row[]; skipDuplicates: true }) {
      await tick();
      let count = 0;
      for (const item of data) {
        if (rows.some((row) => row[key] === item[key])) continue;
        rows.push(clone(item));
        count++;
      }
      return { count };
    },
    async updateMany({ where, data }: { where: Row; data: Row }) {
      await tick();
      const matching = rows.filter((candidate) => matches(candidate, where));
      for (const row of matching) Object.assign(row, clone(data));
      return { count: matching.length };
    },
    async findUnique({ where }: { where: Row }) {
      await tick();
      const row = rows.find((candidate) => matches(candidate, where));
      return row === undefined ? null : clone(row);
    },
  };
}

/** Tick to let concurrent callers interleave like a real database round trip. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * `hashSchemeColumn` (default true) models migration 0003: rows get the
 * column's default `hmac-sha256`; with `false` (an unmigrated model), a write
 * naming `hashScheme` fails like Prisma's validation of an unknown argument.
 */
export function fakePrismaClient(
  options: { transactions?: boolean; rows?: Row[]; hashSchemeColumn?: boolean } = {},
) {
  let rows: Row[] = options.rows ?? [];
  const schemeColumn = options.hashSchemeColumn !== false;
  const checkColumns = (data: Row) => {
    if (!schemeColumn && "hashScheme" in data) {
      throw Object.assign(new Error("Unknown argument `hashScheme`."), {
        name: "PrismaClientValidationError",
      });
    }
  };
  let lock: Promise<unknown> = Promise.resolve();
  const delegate = (): PrismaApiKeyDelegate => ({
    fields: { rotatedAt: new FieldRef("rotatedAt") },
    async create({ data }) {
      await tick();
      checkColumns(data);
      if (rows.some((row) => row.id === data.id || row.prefix === data.prefix)) {
        throw uniqueViolation();
      }
      const row = schemeColumn ? { hashScheme: "hmac-sha256", ...clone(data) } : clone(data);
      rows.push(row);
      return clone(row);
    },
    async findMany({ where, orderBy, take }) {
      await tick();
      const found = rows.filter((row) => matches(row, where)).map(clone);
      found.sort((a, b) => {
        for (const order of orderBy) {
          const [field] = Object.keys(order);
          const sign = order[field] === "desc" ? -1 : 1;
          const x = a[field] instanceof Date ? (a[field] as Date).getTime() : a[field] as string;
          const y = b[field] instanceof Date ? (b[field] as Date).getTime() : b[field] as string;
          if (x < y) return -sign;
          if (x > y) return sign;
        }
        return 0;
      });
      return take === undefined ? found : found.slice(0, take);
    },
    async findUnique({ where }) {
      await tick();
      const row = rows.find((candidate) => matches(candidate, where as Record<string, unknown>));
      return row === undefined ? null : clone(row);
    },
    async update({ where, data }) {
      await tick();
      checkColumns(data);
      const row = rows.find((candidate) => matches(candidate, where));
      if (row === undefined) throw new PrismaKnownRequestError();
      Object.assign(row, clone(data));
      return clone(row);
    },
  });
  const client: PrismaApiKeyClient & { rows: () => Row[] } = {
    apiKey: delegate(),
    rows: () => rows,
  };
  if (options.transactions !== false) {
    client.$transaction = <T>(fn: (tx: { apiKey: PrismaApiKeyDelegate }) => Promise<T>) => {
      // serialised like SERIALIZABLE isolation; rolls back on error
      const run = lock.then(async () => {
        const snapshot = rows.map(clone);
        try {
          return await fn({ apiKey: delegate() });
        } catch (error) {
          rows = snapshot;
          throw error;
        }
      });
      lock = run.catch(() => {});
      return run;
    };
  }
  return client;
}

/**
 * A fake of the raw-SQL client of `PrismaApiKeyStorage`'s `usage` option:
 * it recognises the adapter's two statements (the JSON rows of `recordUsage`,
 * the window of `readUsage`, as ISO text), answers them from its own rows (sums at most
 * 2^53 - 1, as the SQL's `LEAST`), raises
 * `lastUsedAt` in `apiKeyRows()`, and logs each statement.
 */
export function fakeUsageClient(apiKeyRows: () => Row[]) {
  const usage = new Map<string, Row>();
  const statements: string[] = [];
  const counts = (row: Row) => Object.keys(row).filter((c) => typeof row[c] === "number");
  return {
    usage,
    statements,
    async $executeRawUnsafe(query: string, json: unknown): Promise<number> {
      await tick();
      statements.push(query);
      if (!query.includes("INSERT INTO api_key_usage")) throw new Error("fake: unknown statement");
      const rows = JSON.parse(json as string) as Row[];
      for (const { last_used_at, ...row } of rows) {
        const id = `${row.key_id} ${Date.parse(row.bucket as string)}`;
        const held = usage.get(id);
        if (held === undefined) usage.set(id, row);
        else for (const c of counts(row)) held[c] = plus(held[c] as number, row[c] as number);
        const key = apiKeyRows().find((candidate) => candidate.id === row.key_id);
        const at = last_used_at === null ? null : new Date(last_used_at as string);
        const stored = key?.lastUsedAt as Date | null | undefined;
        if (key !== undefined && at !== null && (stored == null || at > stored)) {
          key.lastUsedAt = at;
        }
      }
      return rows.length;
    },
    async $queryRawUnsafe(query: string, ...values: unknown[]): Promise<Row[]> {
      await tick();
      statements.push(query);
      // readUsage: one key's hours (keyId) or the tenant's; readUsageOfKeys: each key's (an array).
      // The window as ISO text, each bucket answered as epoch ms (api_keys/storage/_sql_instant.ts).
      const [tenantId, fromIso, toIso, keyId] = values as [
        string,
        string,
        string,
        string | string[] | null,
      ];
      const [from, to] = [new Date(fromIso), new Date(toIso)];
      const perKey = Array.isArray(keyId);
      const hours = new Map<string, Row>();
      for (const row of usage.values()) {
        const ms = Date.parse(row.bucket as string);
        if (row.tenant_id !== tenantId || ms < from.getTime() || ms >= to.getTime()) continue;
        if (
          perKey ? !keyId.includes(row.key_id as string) : keyId !== null && row.key_id !== keyId
        ) {
          continue;
        }
        const at = perKey ? `${row.key_id} ${ms}` : `${ms}`;
        const hour = hours.get(at);
        if (hour === undefined) hours.set(at, { ...row, bucket: new Date(ms) });
        else for (const c of counts(row)) hour[c] = plus(hour[c] as number, row[c] as number);
      }
      return [...hours.values()].sort((a, b) =>
        (perKey && a.key_id !== b.key_id
          ? (a.key_id as string) < (b.key_id as string) ? -1 : 1
          : 0) ||
        (a.bucket as Date).getTime() - (b.bucket as Date).getTime()
      ).map((row) => ({ ...row, bucket: (row.bucket as Date).getTime() }));
    },
  };
}
