/**
 * `/api/ping`: a tightly rate-limited route (3 requests a minute per key)
 * to see `meta.rateLimit` count down and a 429 with `retryAfter`.
 *
 * @module
 */
import { Controller, Get, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiProperty, ApiSecurity, ApiTags } from "@nestjs/swagger";
import { Throttle } from "@nestjs/throttler";
import { ApiKeysGuard } from "../../api_keys/nest/mod.ts";
import { ApiSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { PING_LIMIT, RATE_LIMIT_WINDOW_MS } from "../limits.ts";

/** What `GET /api/ping` answers. */
export class Pong {
  /** Always `true`. */
  @ApiProperty({ enum: [true] })
  pong!: true;
}

/** Rate-limit showcase. */
@ApiTags("keys")
@ApiSecurity("api-key")
@Controller("api/ping")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
export class PingController {
  /** `{ pong: true }`, at most 3 times a minute per key. */
  @Get()
  @ApiOperation({ summary: "Rate-limited to 3 requests a minute per key" })
  @ApiSafeResponse(Pong)
  @Throttle({ default: { limit: PING_LIMIT, ttl: RATE_LIMIT_WINDOW_MS } })
  ping(): Pong {
    return { pong: true };
  }
}
