/** A small in-test object behaving like a Prisma `apiKey` delegate (with `$transaction`). */
import type { PrismaApiKeyClient, PrismaApiKeyDelegate } from "../../api_keys/mod.ts";

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

function sortable(value: unknown): unknown {
  return value instanceof Date ? value.getTime() : value;
}

/** Prisma's `where`: equality (`null` also matches a missing field), `{ gt }`, `OR`. */
function matches(row: Row, where: Record<string, unknown>): boolean {
  return Object.entries(where).every(([field, value]) => {
    if (field === "OR") return (value as Record<string, unknown>[]).some((w) => matches(row, w));
    if (value === null) return row[field] === null || row[field] === undefined;
    if (typeof value === "object" && !(value instanceof Date) && "gt" in value) {
      const cell = sortable(row[field]);
      return cell !== null && cell !== undefined &&
        (cell as number) > (sortable((value as { gt: unknown }).gt) as number);
    }
    return sortable(row[field]) === sortable(value);
  });
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
    async create({ data }) {
      await tick();
      checkColumns(data);
      if (rows.some((row) => row.id === data.id || row.prefix === data.prefix)) {
        throw Object.assign(new Error("Unique constraint failed"), { code: "P2002" });
      }
      const row = schemeColumn ? { hashScheme: "hmac-sha256", ...clone(data) } : clone(data);
      rows.push(row);
      return clone(row);
    },
    async findMany({ where, orderBy, take }) {
      await tick();
      const found = rows.filter((row) => matches(row, where)).map(clone);
      return found.sort((a, b) => {
        for (const order of orderBy) {
          const [field] = Object.keys(order);
          const x = a[field] instanceof Date ? (a[field] as Date).getTime() : a[field] as string;
          const y = b[field] instanceof Date ? (b[field] as Date).getTime() : b[field] as string;
          if (x < y) return -1;
          if (x > y) return 1;
        }
        return 0;
      }).slice(0, take);
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
