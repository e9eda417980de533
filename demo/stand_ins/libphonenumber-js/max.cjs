// Stand-in (demo/start.json `links`): class-validator loads this at import, for @IsPhoneNumber()
// only; no demo route validates a phone number. A call throws (class-validator then answers
// "invalid"): run the demo with the development install to use it.
exports.parsePhoneNumber = () => {
  throw new Error(
    "libphonenumber-js is not in npm start's light install; run the demo with the development " +
      "install instead: `npm run deno -- task demo`",
  );
};
