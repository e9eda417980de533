/**
 * The demo's leaked-key routes on Nest (`LEAK_ROUTES`): `POST /api/leaked-keys`
 * (anyone reports a key; the page's form posts here) and
 * `POST /api/github/secret-scanning` (GitHub's partner endpoint, trusting the
 * keys given as `DEMO_SECRET_SCANNING_KEYS`). Both read the raw body (the app
 * is created with `rawBody: true`) and sit outside the API-key guard; the
 * public one is limited per client and globally (`LeakReportLimitGuard`).
 *
 * @module
 */
import { Controller, Inject, Post, Req, Res, UseGuards } from "@nestjs/common";
import { ApiKeysService, type SecretScanningPublicKey } from "../../api_keys/mod.ts";
import {
  leakReportFromRequest,
  type LeakReportHttpRequest,
  type LeakReportHttpResponse,
  sendLeakReport,
} from "../../api_keys/nest/api_keys.leaks.ts";
import { createDemoLeakHandlers, type DemoLeakHandlers, LEAK_ROUTES } from "./handlers.ts";
import { LeakReportLimitGuard } from "./leak_report_limit.guard.ts";

/** Injection token of the secret-scanning public keys the partner route trusts. */
export const DEMO_SECRET_SCANNING_KEYS = Symbol("DEMO_SECRET_SCANNING_KEYS");

/** Public revocation and GitHub's partner endpoint. */
@Controller()
export class LeakedKeysController {
  private readonly handlers: DemoLeakHandlers;

  constructor(
    @Inject(ApiKeysService) service: ApiKeysService,
    @Inject(DEMO_SECRET_SCANNING_KEYS) publicKeys: readonly SecretScanningPublicKey[],
  ) {
    this.handlers = createDemoLeakHandlers(service, publicKeys);
  }

  /** Anyone reports a key: always the same 202; revoked afterwards when genuine. */
  @Post(LEAK_ROUTES.report)
  @UseGuards(LeakReportLimitGuard)
  async leaked(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.handlers.report(leakReportFromRequest(req)));
  }

  /** GitHub's signed report (here signed by the demo's local signer). */
  @Post(LEAK_ROUTES.partner)
  async github(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.handlers.partner(leakReportFromRequest(req)));
  }
}
