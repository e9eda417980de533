// Stand-in (demo/start.json `links`): the light install leaves out @nestjs/swagger's compiler plugin.
throw new Error(
  "@microsoft/tsdoc is not in npm start's light install; run the demo with the development " +
    "install instead: `npm run deno -- task demo`",
);
