/**
 * How the demo finds the client IP: as if a reverse proxy on the loopback
 * interface sat in front. The framework trusts exactly that proxy's addresses
 * (Express `trust proxy`, Fastify `trustProxy`), never every hop: `true` would
 * make `request.ip` the left-most `X-Forwarded-For` entry, which the client
 * writes itself. So `X-Forwarded-For` is honoured only from 127.0.0.1 or ::1
 * (`curl -H 'X-Forwarded-For: 203.0.113.7'` shows the localhost-only key
 * refused), other peers cannot spoof it, and a value the framework cannot
 * read as an address reaches the guard as is and is refused (fail closed).
 *
 * @module
 */
import type { AbstractHttpAdapter } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import {
  type ApiKeyClientIpResolver,
  defaultApiKeyClientIpResolver,
} from "../api_keys/nest/mod.ts";
import type { DemoAdapter } from "./cli.ts";
import { DEMO_TRUSTED_PROXIES } from "./proxies.ts";

export { DEMO_TRUSTED_PROXIES };

/**
 * The HTTP adapter of the demo, trusting {@link DEMO_TRUSTED_PROXIES} only.
 * Fastify's is loaded only when asked for (`npm start`'s light install,
 * demo/deno.json, does not have it).
 *
 * @example
 * ```ts
 * import { demoHttpAdapter } from "./client_ip.ts";
 * const adapter = await demoHttpAdapter("fastify");
 * ```
 */
export async function demoHttpAdapter(adapter: DemoAdapter): Promise<AbstractHttpAdapter> {
  const trusted = [...DEMO_TRUSTED_PROXIES];
  if (adapter === "fastify") {
    const { FastifyAdapter } = await import("@nestjs/platform-fastify").catch((error) => {
      throw new Error(
        "--adapter fastify needs the development install: run `npm run deno -- task demo " +
          `--adapter fastify\` (${(error as Error).message})`,
      );
    });
    return new FastifyAdapter({ trustProxy: trusted });
  }
  const express = new ExpressAdapter();
  express.set("trust proxy", trusted);
  return express;
}

/**
 * The demo's client-IP resolver (also used by `GET /api/whoami` to show the
 * address the guard saw): the library's default, `request.ip`, which the
 * adapter computes with the trust above. Nothing replaces an address it
 * cannot read.
 *
 * @example
 * ```ts
 * import { demoClientIpResolver } from "./client_ip.ts";
 * demoClientIpResolver({ ip: "203.0.113.7" }); // "203.0.113.7"
 * ```
 */
export const demoClientIpResolver: ApiKeyClientIpResolver = defaultApiKeyClientIpResolver;
