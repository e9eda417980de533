/**
 * The demo's leaked-key routes: `POST /api/leaked-keys` (anyone reports a
 * key; the page's form posts here) and `POST /api/github/secret-scanning`
 * (GitHub's partner endpoint, trusting the keys given as
 * `DEMO_SECRET_SCANNING_KEYS`). Both read the raw body (the app is created
 * with `rawBody: true`) and sit outside the API-key guard.
 *
 * @module
 */
import { Controller, Inject, Post, Req, Res } from "@nestjs/common";
import {
  ApiKeysService,
  createPublicRevocationHandler,
  createSecretScanningPartnerHandler,
  type LeakReportHandler,
  type SecretScanningPublicKey,
} from "../../api_keys/mod.ts";
import {
  leakReportFromRequest,
  type LeakReportHttpRequest,
  type LeakReportHttpResponse,
  sendLeakReport,
} from "../../api_keys/nest/mod.ts";

/** Injection token of the secret-scanning public keys the partner route trusts. */
export const DEMO_SECRET_SCANNING_KEYS = Symbol("DEMO_SECRET_SCANNING_KEYS");

/** Public revocation and GitHub's partner endpoint. */
@Controller("api")
export class LeakedKeysController {
  private readonly report: LeakReportHandler;
  private readonly partner: LeakReportHandler;

  constructor(
    @Inject(ApiKeysService) service: ApiKeysService,
    @Inject(DEMO_SECRET_SCANNING_KEYS) publicKeys: readonly SecretScanningPublicKey[],
  ) {
    this.report = createPublicRevocationHandler({ service });
    this.partner = createSecretScanningPartnerHandler({ service, publicKeys });
  }

  /** Anyone reports a key: always the same 202; revoked afterwards when genuine. */
  @Post("leaked-keys")
  async leaked(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.report(leakReportFromRequest(req)));
  }

  /** GitHub's signed report (here signed by the demo's local signer). */
  @Post("github/secret-scanning")
  async github(@Req() req: LeakReportHttpRequest, @Res() res: LeakReportHttpResponse) {
    sendLeakReport(res, await this.partner(leakReportFromRequest(req)));
  }
}
