/**
 * The OpenTelemetry bridge: `instrumentTelemetry` turns the reports of an
 * `ApiKeysService`, a `RateLimiter`, a safe-response `Responder` and a change
 * feed into the instruments and spans of docs/telemetry.md. Needs the optional
 * peer `@opentelemetry/api` 1.x; no other entry point loads it.
 *
 * @module
 */
import {
  type Attributes,
  type Context,
  context,
  type Counter,
  type Histogram,
  type Link,
  type Meter,
  metrics,
  type ObservableGauge,
  type ObservableResult,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import type { ApiKeysService } from "../api_keys/service.ts";
import type { ApiKeyChangeFeed } from "../api_keys/change_feed.ts";
import type { RateLimiter } from "../rate_limits/limiter.ts";
import type { Responder } from "../safe_response/responder.ts";
import {
  type ApiKeyTaps,
  type CheckTrace,
  type LimiterTaps,
  type ResponderTaps,
  type Settled,
  tapsOf,
} from "./_taps.ts";
import { callDetached } from "./_detached.ts";
import { assertKnownFields } from "./_known_fields.ts";

/** The instrumentation scope's name (the package's). */
export const TELEMETRY_SCOPE = "@saferoute/api-kit";
/** The instrumentation scope's version (the package's). */
export const TELEMETRY_VERSION = "0.2.0";

/** Where instruments come from: `@opentelemetry/api`'s `MeterProvider` (an SDK's, Deno's). */
export interface TelemetryMeterProvider {
  /** The meter of an instrumentation scope. */
  getMeter(name: string, version?: string): unknown;
}

/** Where spans come from: `@opentelemetry/api`'s `TracerProvider` (an SDK's, Deno's). */
export interface TelemetryTracerProvider {
  /** The tracer of an instrumentation scope. */
  getTracer(name: string, version?: string): unknown;
}

/** What `instrumentTelemetry` instruments, and where it reports. */
export interface TelemetryOptions {
  /** Where the instruments live (default: the global `MeterProvider`). */
  meterProvider?: TelemetryMeterProvider;
  /** Where the spans go (default: the global `TracerProvider`). */
  tracerProvider?: TelemetryTracerProvider;
  /** The service whose authorizations, cache, credits and usage flushes are counted. */
  service?: ApiKeysService;
  /** The limiter whose checks and store calls are counted and traced. */
  limiter?: RateLimiter;
  /**
   * The responder whose replies are counted: a `Responder`, a Fetch binding holding one as
   * `responder`, or in Nest the one `SafeResponseModule` provides (inject `Responder`).
   */
  responder?: Responder | { readonly responder: Responder };
  /** The change feed whose health is observed. */
  changeFeed?: ApiKeyChangeFeed;
  /**
   * Tenants that get an `api_key.tenant` attribute (default: none, every
   * tenant reported without it). At most 100.
   */
  tenantAllowList?: readonly string[];
}

/** The options `instrumentTelemetry` takes: any other is refused (a misspelt one instruments nothing). */
const OPTIONS: readonly (keyof TelemetryOptions)[] = [
  "meterProvider",
  "tracerProvider",
  "service",
  "limiter",
  "responder",
  "changeFeed",
  "tenantAllowList",
];

/** The change feeds instrumented now (a feed has no taps to claim). */
const instrumentedFeeds = new WeakSet<ApiKeyChangeFeed>();

/** What `instrumentTelemetry` answers. */
export interface Telemetry {
  /** Stops reporting: unsets every tap, removes the gauges' callbacks. */
  close(): void;
}

/** One second in ms (instruments report seconds, after the OpenTelemetry conventions). */
const S = 1_000;
/** Bucket bounds of the duration histograms, in seconds. */
const DURATION_BUCKETS = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
];

/** A `count` attribute-set builder keyed by its parts, so every series shares one object. */
function interned<K extends string>(build: (key: K) => Attributes): (key: K) => Attributes {
  const sets = new Map<K, Attributes>();
  return (key) => {
    let set = sets.get(key);
    if (set === undefined) sets.set(key, set = Object.freeze(build(key)));
    return set;
  };
}

/** What becomes of an SDK's or exporter's fault: nothing, the operation goes on. */
const IGNORE = () => {};

/**
 * `fn`, called through `callDetached`: its throw, or the rejection of the promise it answers,
 * goes nowhere. Telemetry never fails an operation.
 */
function safely<A extends unknown[]>(fn: (...args: A) => unknown): (...args: A) => void {
  return (...args) => callDetached(fn, args, IGNORE);
}

/** Every instrument: name → unit, description (docs/telemetry.md "Instruments" is the same table). */
const INSTRUMENTS = {
  "api_key.authorizations": ["{authorization}", "Authorizations, by outcome."],
  "api_key.cache.lookups": ["{lookup}", "Verification-cache lookups, by result."],
  "api_key.credits.spent": ["{credit}", "Credits spent by authorizations."],
  "api_key.credits.exhausted": [
    "{balance}",
    "Balances a spend left at 0 (a key's own, its tenant's pool).",
  ],
  "api_key.usage.rows": ["{row}", "Usage rows flushed, by outcome (written, failed, dropped)."],
  "rate_limit.checks": ["{check}", "Rate-limit checks, by who answered and the result."],
  "rate_limit.store.unavailable": ["{check}", "Checks the store did not answer, by reason."],
  "safe_response.responses": ["{response}", "Responses written, by status class."],
  "api_key.change_feed.staleness": [
    "s",
    "Upper bound on the age of an undelivered change (+Inf while unbounded).",
  ],
  "api_key.change_feed.healthy": ["1", "1 while the feed is in sync, else 0."],
  "api_key.change_feed.notices_arrive": [
    "1",
    "1 when the database's notices arrive, 0 when not (absent until known).",
  ],
  "api_key.authorization.duration": ["s", "Authorization time."],
  "rate_limit.check.duration": ["s", "Check time."],
  "rate_limit.store.duration": ["s", "Store call time."],
} as const;

/** An instrument's name. */
type InstrumentName = keyof typeof INSTRUMENTS;

/** An instrument's `add` or `record`, through `safely`. */
type Report = (value: number, attributes: Attributes) => void;

function counter(meter: Meter, name: InstrumentName): { add: Report } {
  const [unit, description] = INSTRUMENTS[name];
  const instrument: Counter = meter.createCounter(name, { unit, description });
  return { add: safely((value: number, set: Attributes) => instrument.add(value, set)) };
}

function gauge(meter: Meter, name: InstrumentName): ObservableGauge {
  const [unit, description] = INSTRUMENTS[name];
  return meter.createObservableGauge(name, { unit, description });
}

function histogram(meter: Meter, name: InstrumentName): { record: Report } {
  const [unit, description] = INSTRUMENTS[name];
  const instrument: Histogram = meter.createHistogram(name, {
    unit,
    description,
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  return { record: safely((value: number, set: Attributes) => instrument.record(value, set)) };
}

/** Sets the taps of `owner` (a `TypeError` when it has none or is instrumented already). */
function claim<T extends object>(owner: unknown, what: string): T {
  const taps = tapsOf<T>(owner);
  if (taps === undefined) throw new TypeError(`${what} is not one the library made`);
  if (Object.keys(taps).some((k) => (taps as Record<string, unknown>)[k] !== undefined)) {
    throw new TypeError(`${what} is instrumented already`);
  }
  return taps;
}

/**
 * A span of `tracer` named `name`, child of `parent` (default: the active context), of `kind`
 * (default: `INTERNAL`).
 */
function startSpan(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  parent: Context = context.active(),
  links?: Link[],
  kind: SpanKind = SpanKind.INTERNAL,
): Span {
  return tracer.startSpan(name, { kind, attributes, links }, parent);
}

/** Marks `span` as failed: `error.type` and status `ERROR`. */
const markFailed = safely((span: Span, errorType: string) => {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
});

/** `span.end()`, guarded on its own: a setter's throw before it never leaves a span open. */
const endSpan = safely((span: Span) => span.end());

/** Ends `span`; with `errorType` (it failed), as an error: status `ERROR` and `error.type`. */
function end(span: Span, errorType?: string): void {
  if (errorType !== undefined) markFailed(span, errorType);
  endSpan(span);
}

/** What ends `span` when its call settles. */
function ending(span: Span): Settled {
  return (errorType) => end(span, errorType);
}

/** Sets a check's answer's attributes on its span. */
const answered = safely((check: CheckSpan, outcome: string, allowed: boolean) =>
  check.span.setAttributes(check.attributesOf(outcome, allowed))
);

/**
 * A check's span (`LimiterTaps.enter`'s token): it ends through itself, so a `close()` while the
 * check is in flight leaves no span open.
 */
class CheckSpan implements CheckTrace {
  constructor(
    readonly span: Span,
    readonly attributesOf: (outcome: string, allowed: boolean) => Attributes,
  ) {}

  leave(outcome: string, allowed: boolean): void {
    answered(this, outcome, allowed);
    endSpan(this.span);
  }

  fail(errorType: string): void {
    end(this.span, errorType);
  }
}

function serviceTaps(
  meter: Meter,
  tracer: Tracer,
  service: ApiKeysService,
  tenants: ReadonlySet<string>,
): ApiKeyTaps {
  const taps = claim<ApiKeyTaps>(service, "service");
  const authorizations = counter(meter, "api_key.authorizations");
  const duration = histogram(meter, "api_key.authorization.duration");
  const lookups = counter(meter, "api_key.cache.lookups");
  const spent = counter(meter, "api_key.credits.spent");
  const exhausted = counter(meter, "api_key.credits.exhausted");
  const rows = counter(meter, "api_key.usage.rows");
  const tenantOf = (tenantId: string | undefined): Attributes =>
    tenantId !== undefined && tenants.has(tenantId) ? { "api_key.tenant": tenantId } : {};
  const outcomeSet = interned((key: string) => {
    const [outcome, environment] = key.split("|");
    return { "api_key.outcome": outcome, "api_key.environment": environment };
  });
  const cacheSet = interned((result: string) => ({ "api_key.cache.result": result }));
  const rowSet = interned((outcome: string) => ({ "api_key.usage.outcome": outcome }));
  taps.authorization = safely((outcome, environment, tenantId, ms) => {
    let attributes = outcomeSet(`${outcome}|${environment ?? "unknown"}`);
    if (tenantId !== undefined && tenants.has(tenantId)) {
      attributes = { ...attributes, ...tenantOf(tenantId) };
    }
    authorizations.add(1, attributes);
    duration.record(ms / S, attributes);
  });
  taps.cache = safely((result) => lookups.add(1, cacheSet(result)));
  taps.credits = safely((cost, emptied, tenantId) => {
    const attributes = tenantOf(tenantId);
    spent.add(cost, attributes);
    if (emptied > 0) exhausted.add(emptied, attributes);
  });
  taps.usageFlush = safely((outcome, n) => rows.add(n, rowSet(outcome)));
  taps.span = (name, n) => {
    try {
      // A usage write carries every tenant's rows, on the flush's timer (armed inside whichever
      // request came first): a root, never that request's child.
      const parent = name === "api_key.usage.write" ? ROOT_CONTEXT : context.active();
      const span = startSpan(
        tracer,
        name,
        n === undefined ? {} : { "api_key.usage.rows": n },
        parent,
      );
      return ending(span);
    } catch {
      return undefined;
    }
  };
  return taps;
}

function limiterTaps(meter: Meter, tracer: Tracer, limiter: RateLimiter): LimiterTaps {
  const taps = claim<LimiterTaps>(limiter, "limiter");
  const checks = counter(meter, "rate_limit.checks");
  const checkDuration = histogram(meter, "rate_limit.check.duration");
  const storeDuration = histogram(meter, "rate_limit.store.duration");
  const unavailable = counter(meter, "rate_limit.store.unavailable");
  const store = limiter.store.name ?? "custom";
  const checkSet = interned((key: string) => {
    const [outcome, result] = key.split("|");
    return { "rate_limit.outcome": outcome, "rate_limit.result": result };
  });
  const checkAttributes = (outcome: string, allowed: boolean) =>
    checkSet(`${outcome}|${allowed ? "allowed" : "refused"}`);
  const storeSet = Object.freeze({ "rate_limit.store.name": store });
  const storeErrorSet = interned((errorType: string) => ({ ...storeSet, "error.type": errorType }));
  const reasonSet = interned((reason: string) => ({
    "rate_limit.reason": reason,
    "rate_limit.on_store_error": limiter.onStoreError,
  }));
  taps.check = safely((outcome, allowed, ms) => {
    const attributes = checkAttributes(outcome, allowed);
    checks.add(1, attributes);
    checkDuration.record(ms / S, attributes);
  });
  taps.storeCall = safely((ms, _checks, errorType) =>
    storeDuration.record(ms / S, errorType === undefined ? storeSet : storeErrorSet(errorType))
  );
  taps.unavailable = safely((reason) => unavailable.add(1, reasonSet(reason)));
  taps.enter = () => {
    try {
      return new CheckSpan(startSpan(tracer, "rate_limit.check", storeSet), checkAttributes);
    } catch {
      return undefined;
    }
  };
  taps.batch = (tokens, checkCount) => {
    try {
      const live: Span[] = [];
      for (const token of tokens) if (token instanceof CheckSpan) live.push(token.span);
      const parent = live.length > 0 ? trace.setSpan(context.active(), live[0]) : context.active();
      const links = live.map((s) => ({ context: s.spanContext() }));
      const span = startSpan(
        tracer,
        "rate_limit.store.call",
        { ...storeSet, "rate_limit.store.checks": checkCount },
        parent,
        links,
        SpanKind.CLIENT,
      );
      return ending(span);
    } catch {
      return undefined;
    }
  };
  return taps;
}

function responderTaps(meter: Meter, target: Responder | { readonly responder: Responder }) {
  const responder = "responder" in target ? target.responder : target;
  const taps = claim<ResponderTaps>(responder, "responder");
  const responses = counter(meter, "safe_response.responses");
  const classSet = interned((c: string) => ({ "safe_response.status_class": c }));
  taps.response = safely((status) => {
    const c = Math.floor(status / 100);
    responses.add(1, classSet(c >= 1 && c <= 5 ? `${c}xx` : "other"));
  });
  return taps;
}

/**
 * Adds the change feed's gauges; pushes each gauge's removal to `undo` as soon
 * as its callback is registered, so a throw half-way leaves nothing behind.
 */
function feedGauges(meter: Meter, feed: ApiKeyChangeFeed, undo: (() => void)[]): void {
  if (instrumentedFeeds.has(feed)) throw new TypeError("changeFeed is instrumented already");
  instrumentedFeeds.add(feed);
  undo.push(() => instrumentedFeeds.delete(feed));
  const observe = (result: ObservableResult, read: () => number | undefined) => {
    try {
      // +Inf is observed (an unbounded lag): an SDK repeats a gauge's last value when its
      // callback observes nothing, so skipping it would report the last finite lag.
      const value = read();
      if (value !== undefined && !Number.isNaN(value)) result.observe(value);
    } catch {
      // a failing status() reports nothing
    }
  };
  const reads: [InstrumentName, () => number | undefined][] = [
    ["api_key.change_feed.staleness", () => feed.status().stalenessMs / S],
    ["api_key.change_feed.healthy", () => feed.status().healthy ? 1 : 0],
    ["api_key.change_feed.notices_arrive", () => {
      const arrive = feed.status().noticesArrive;
      return typeof arrive === "boolean" ? (arrive ? 1 : 0) : undefined;
    }],
  ];
  for (const [name, read] of reads) {
    const instrument = gauge(meter, name);
    const callback = (r: ObservableResult) => observe(r, read);
    instrument.addCallback(callback);
    undo.push(() => instrument.removeCallback(callback));
  }
}

/**
 * Reports the library's work through OpenTelemetry: the instruments of
 * docs/telemetry.md on `meterProvider`'s meter and spans on
 * `tracerProvider`'s tracer, both with the scope `@saferoute/api-kit` and its
 * version. Each target is instrumented once (a second call is a `TypeError`
 * until `close()`); an unknown option is a `TypeError`. No key id, prefix, tenant (unless allow-listed) or address
 * is ever an attribute.
 *
 * @example
 * ```ts
 * import { metrics } from "@opentelemetry/api";
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 * import { instrumentTelemetry } from "@saferoute/api-kit/telemetry";
 * const limiter = createRateLimiter({ logger: () => {} });
 * const telemetry = instrumentTelemetry({ meterProvider: metrics.getMeterProvider(), limiter });
 * await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * telemetry.close();
 * ```
 */
export function instrumentTelemetry(options: TelemetryOptions): Telemetry {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError("instrumentTelemetry: options must be an object");
  }
  assertKnownFields(options, OPTIONS, "instrumentTelemetry", "option");
  const allow = options.tenantAllowList ?? [];
  if (!Array.isArray(allow) || allow.length > 100 || allow.some((t) => typeof t !== "string")) {
    throw new TypeError("tenantAllowList must list at most 100 tenant ids");
  }
  const meter = (options.meterProvider ?? metrics.getMeterProvider())
    .getMeter(TELEMETRY_SCOPE, TELEMETRY_VERSION) as Meter;
  const tracer = (options.tracerProvider ?? trace.getTracerProvider())
    .getTracer(TELEMETRY_SCOPE, TELEMETRY_VERSION) as Tracer;
  const claimed: object[] = [];
  const undo: (() => void)[] = [];
  try {
    if (options.service !== undefined) {
      claimed.push(serviceTaps(meter, tracer, options.service, new Set(allow)));
    }
    if (options.limiter !== undefined) claimed.push(limiterTaps(meter, tracer, options.limiter));
    if (options.responder !== undefined) claimed.push(responderTaps(meter, options.responder));
    if (options.changeFeed !== undefined) feedGauges(meter, options.changeFeed, undo);
  } catch (error) {
    for (const taps of claimed) clear(taps);
    removeAll(undo);
    throw error;
  }
  return {
    close() {
      for (const taps of claimed.splice(0)) clear(taps);
      const failure = removeAll(undo.splice(0));
      if (failure !== undefined) throw failure.error;
    },
  };
}

/** Runs every removal of `undo`, a throw of one not stopping the next; the first throw, if any. */
function removeAll(undo: readonly (() => void)[]): { error: unknown } | undefined {
  let failure: { error: unknown } | undefined;
  for (const fn of undo) {
    try {
      fn();
    } catch (error) {
      failure ??= { error };
    }
  }
  return failure;
}

/** Unsets every tap of `taps`. */
function clear(taps: object): void {
  for (const key of Object.keys(taps)) delete (taps as Record<string, unknown>)[key];
}
