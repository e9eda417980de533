/**
 * Serves the web page: `/`, `/page.js` and the bundled client at
 * `/client.js`. Not wrapped in the envelope and not in the OpenAPI document.
 *
 * @module
 */
import { Controller, Get, Header, Inject } from "@nestjs/common";
import { ApiExcludeController } from "@nestjs/swagger";
import { RawResponse } from "../safe_response/nest/mod.ts";
import type { PageAssets } from "./page_assets.ts";
import { DEMO_PAGE_ASSETS } from "./tokens.ts";

const NO_STORE = "no-store";

/** The demo page. */
@ApiExcludeController()
@Controller()
export class PageController {
  readonly #assets: PageAssets;

  /** Builds the controller over the loaded assets. */
  constructor(@Inject(DEMO_PAGE_ASSETS) assets: PageAssets) {
    this.#assets = assets;
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
}
