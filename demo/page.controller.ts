/**
 * Serves the web page: `/`, `/page.js`, the bundled client at `/client.js`,
 * the bundled `<api-keys-manager>` at `/elements.js` and the page's session
 * (`page_session.ts`). Not wrapped in the envelope and not in the OpenAPI
 * document.
 *
 * @module
 */
import { Controller, Get, Header, Headers, Inject } from "@nestjs/common";
import { ApiExcludeController } from "@nestjs/swagger";
import { RawResponse } from "../safe_response/nest/mod.ts";
import type { PageAssets } from "./page_assets.ts";
import { DemoHttpError } from "./http_error.ts";
import {
  PAGE_SESSION_PATH,
  PAGE_SESSION_REFUSAL,
  type PageSession,
  pageSessionBody,
  pageSessionServes,
} from "./page_session.ts";
import { DEMO_PAGE_ASSETS, DEMO_PAGE_SESSION } from "./tokens.ts";

const NO_STORE = "no-store";

/** The demo page. */
@ApiExcludeController()
@Controller()
export class PageController {
  readonly #assets: PageAssets;
  readonly #session: PageSession;

  /** Builds the controller over the loaded assets and the page's session. */
  constructor(
    @Inject(DEMO_PAGE_ASSETS) assets: PageAssets,
    @Inject(DEMO_PAGE_SESSION) session: PageSession,
  ) {
    this.#assets = assets;
    this.#session = session;
  }

  /** The page. */
  @Get()
  @RawResponse()
  @Header("Content-Type", "text/html; charset=utf-8")
  @Header("Cache-Control", NO_STORE)
  index(): string {
    return this.#assets.html;
  }

  /** The page's script. */
  @Get("page.js")
  @RawResponse()
  @Header("Content-Type", "text/javascript; charset=utf-8")
  @Header("Cache-Control", NO_STORE)
  script(): string {
    return this.#assets.script;
  }

  /** The `./client` module as one browser ES module. */
  @Get("client.js")
  @RawResponse()
  @Header("Content-Type", "text/javascript; charset=utf-8")
  @Header("Cache-Control", NO_STORE)
  client(): string {
    return this.#assets.client;
  }

  /** `client/elements/mod.ts` as one browser ES module. */
  @Get("elements.js")
  @RawResponse()
  @Header("Content-Type", "text/javascript; charset=utf-8")
  @Header("Cache-Control", NO_STORE)
  elements(): string {
    return this.#assets.elements;
  }

  /** The token of the page's `<api-keys-manager>` (loopback `Host` and `Origin` only). */
  @Get(PAGE_SESSION_PATH.slice(1))
  @RawResponse()
  @Header("Content-Type", "application/json")
  @Header("Cache-Control", NO_STORE)
  session(@Headers("host") host?: string, @Headers("origin") origin?: string): string {
    if (!pageSessionServes(this.#session, host, origin)) {
      throw new DemoHttpError(403, PAGE_SESSION_REFUSAL);
    }
    return pageSessionBody(this.#session);
  }
}
