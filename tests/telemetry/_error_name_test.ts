import { describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { errorMessageOf, errorNameOf, isBug } from "../../telemetry/_error_name.ts";

/** Values whose `field` cannot be read: a revoked `Proxy`, an `Error` whose getter throws. */
const unreadable = (field: "name" | "message"): unknown[] => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const error = Object.defineProperty(new Error("x"), field, {
    get() {
      throw new Error("getter");
    },
  });
  return [proxy, error];
};

describe("errorNameOf", () => {
  it("an Error's name, another value's type, unknown when it cannot be read; never throws", () => {
    assert.equal(errorNameOf(new RangeError("secret message")), "RangeError");
    assert.equal(errorNameOf("down"), "string");
    assert.equal(errorNameOf(undefined), "undefined");
    assert.equal(errorNameOf({ name: "NotAnError" }), "object");
    assert.deepEqual(unreadable("name").map(errorNameOf), ["unknown", "unknown"]);
  });
});

describe("errorMessageOf", () => {
  it("a value's message, else its code, else the value as text, at most 200 characters; unknown when it cannot be read; never throws", () => {
    assert.equal(errorMessageOf(new RangeError("down")), "down");
    assert.equal(
      errorMessageOf(Object.assign(new Error(""), { code: "ECONNREFUSED" })),
      "ECONNREFUSED",
    );
    assert.equal(errorMessageOf("down"), "down");
    assert.equal(errorMessageOf(undefined), "undefined");
    assert.equal(errorMessageOf(new Error("x".repeat(300))), "x".repeat(200));
    assert.deepEqual(unreadable("message").map(errorMessageOf), ["unknown", "unknown"]);
    assert.equal(errorMessageOf(Object.create(null)), "unknown");
  });
});

describe("errorMessageOf: credentials", () => {
  it("hides a URL's user and password (a connection string pg cannot parse is quoted in its message), also when the message is cut inside them", () => {
    const url = "postgresql://app:s3cretPW@db.internal:99999/app";
    assert.equal(
      errorMessageOf(new TypeError(`Invalid URL: '${url}' with base 'postgres://base'`)),
      "Invalid URL: 'postgresql://***@db.internal:99999/app' with base 'postgres://base'",
    );
    assert.equal(
      errorMessageOf(`redis://:pw@h:1 and rediss://u:p@h2`),
      "redis://***@h:1 and rediss://***@h2",
    );
    const cut = errorMessageOf(new Error(`${"x".repeat(180)} postgresql://app:s3cretPW@db/app`));
    assert.ok(!cut.includes("s3cret"), cut);
    assert.ok(cut.length <= 200);
    // A URL without credentials, and text that only looks like one, unchanged.
    assert.equal(
      errorMessageOf(new Error("GET https://example.com/a")),
      "GET https://example.com/a",
    );
    assert.equal(errorMessageOf(new Error("user@example.com")), "user@example.com");
  });

  it("hides a URL whose scheme follows a word character (conn_postgresql://…, 2postgres://…)", () => {
    assert.equal(
      errorMessageOf(new Error("conn_postgresql://admin:hunter2@db and 2postgres://a:b@h")),
      "conn_postgresql://***@db and 2postgres://***@h",
    );
  });

  it("hides a URL cut before its @ whole after its scheme, also when a hidden value before it shortens the text into the 200 shown", () => {
    const token = "e".repeat(720);
    for (let pad = 0; pad < 80; pad++) {
      const text = `GET https://idp/x?access_token=${token} failed;${
        " ".repeat(pad)
      } redis://default:s3cretPassw0rd@cache:6379`;
      const shown = errorMessageOf(new Error(text));
      assert.ok(!shown.includes("s3cret") && !shown.includes("default"), `${pad}: ${shown}`);
      assert.ok(shown.length <= 200);
    }
    // Cut inside a password holding @: nothing of it shown.
    const cut = errorMessageOf(
      new Error(`${"password=" + "p".repeat(770)} x redis://u:ab@cdefghijklmnopqr@h`),
    );
    assert.equal(cut, "password=*** x redis://***");
    // A URL not cut keeps what follows its scheme.
    assert.equal(
      errorMessageOf(new Error(`token=${"t".repeat(700)} https://example.com/a`)),
      "token=*** https://example.com/a",
    );
  });

  it("hides a password holding /, ?, #, + or @ (openssl rand -base64), up to the URL's last @, which keeps its host", () => {
    for (
      const password of ["hun/ter2", "hun?ter2", "hun#ter2", "Zk9/q+Hunter2=", "hun@ter2", "@/?#@"]
    ) {
      assert.equal(
        errorMessageOf(new TypeError(`Invalid URL: 'postgresql://admin:${password}@db:5432/app'`)),
        "Invalid URL: 'postgresql://***@db:5432/app'",
        password,
      );
    }
    assert.equal(
      errorMessageOf(new Error("redis://:a/b@h:1, rediss://u:p#q@h2 down")),
      "redis://***@h:1, rediss://***@h2 down",
    );
    // Without credentials, an @ later in the URL hides what comes before it
    // (the two cannot be told apart): more hidden, never less, and the rest kept.
    assert.equal(
      errorMessageOf(new Error("GET https://example.com/a@b")),
      "GET https://***@b",
    );
    assert.equal(errorMessageOf(new Error("postgresql://db/x?u=a@b")), "postgresql://***@b");
  });

  it("hides a password holding a quote, which a URL's userinfo keeps unescaped (Node's Request names the URL)", () => {
    for (const password of ["pa'ss9word", 'pa"ss', "'", "a'b'c"]) {
      assert.equal(
        errorMessageOf(
          new TypeError(
            `Request cannot be constructed from a URL that includes credentials: https://app:${password}@store.example/`,
          ),
        ),
        "Request cannot be constructed from a URL that includes credentials: https://***@store.example/",
        password,
      );
    }
    // A credential after a URL in JSON, its value holding an @: hidden whole, never its tail.
    for (
      const [name, value] of [["password", "hunter@2secret"], ["password", "@Sup3rSecret"], [
        "token",
        "tok_a@b_LEAKME",
      ], ["api_key", "k@LEAKME123"]]
    ) {
      const shown = errorMessageOf(new Error(`{"url":"https://db.example/","${name}":"${value}"}`));
      assert.ok(shown.startsWith('{"url":"https://'), shown);
      assert.doesNotMatch(shown, /2secret|Sup3r|LEAKME|hunter/, value);
    }
    assert.equal(
      errorMessageOf(new Error("url=https://h.example;password=p@LEAKME")),
      "url=https://***",
    );
    // A URL's password holding what reads as a named credential: hidden from its scheme on.
    for (
      const password of [
        "Xk9-token=Q7",
        "Xk9-secret:Q7",
        "Xk9&pwd=Q7",
        "h2?password=1",
        "pass:word",
      ]
    ) {
      const shown = errorMessageOf(new Error(`connect postgres://alice:${password}@db/app failed`));
      assert.ok(shown.startsWith("connect postgres://***"), `${password}: ${shown}`);
      assert.doesNotMatch(shown, /alice|Xk9|Q7|h2|word/, password);
    }
    // A password holding a space or ending in a line break (read from a file): hidden up to the
    // URL's last @ past it, not cut short at the space.
    for (const password of ["s3cr etPw", "s3#cretPw\n", "pa\tss@w rd"]) {
      const shown = errorMessageOf(
        new TypeError(`Invalid URL: 'postgresql://api_kit:${password}@127.0.0.1:5432/db'`),
      );
      assert.equal(shown, "Invalid URL: 'postgresql://***@127.0.0.1:5432/db'", password);
    }
    // A quoted URL still ends at its quote's space: the text after it is kept.
    assert.equal(
      errorMessageOf(new Error(`connect 'redis://u:p@h:1' failed, see 'docs'`)),
      "connect 'redis://***@h:1' failed, see 'docs'",
    );
  });

  it("hides the value of a credential parameter in a URL's query, up to the next &, space or quote (a # too: it may be the password's)", () => {
    // Every credential name, in any letter case, also as a name's end (sslpassword, client_secret).
    const names = [
      "password",
      "PASS",
      "Passwd",
      "pwd",
      "secret",
      "token",
      "api_key",
      "apiKey",
      "access_token",
      "sslpassword",
      "client_secret",
    ];
    for (
      const [text, shown] of [
        [
          "postgresql://db/x?user=admin&password=hunter2&sslmode=require",
          "postgresql://db/x?user=admin&password=***&sslmode=require",
        ],
        [
          "Invalid URL: 'redis://host:6379?password=s3cret' down",
          "Invalid URL: 'redis://host:6379?password=***' down",
        ],
        [
          `rediss://h/0?${names.map((n, i) => `${n}=v${i}`).join("&")}#f x`,
          `rediss://h/0?${names.map((n) => `${n}=***`).join("&")} x`,
        ],
        ["redis://h?token=hun#ter2", "redis://h?token=***"],
        // Other parameters, and names that only hold a credential's name, unchanged.
        [
          "postgresql://db/x?user=a&sslmode=require&passes=2&tokens=3",
          "postgresql://db/x?user=a&sslmode=require&passes=2&tokens=3",
        ],
        ["?token", "?token"],
        // A quoted value, single or double, hidden whole.
        [`redis://db?password="hun ter2" x`, `redis://db?password=*** x`],
        [`redis://db?token='hun&ter2'&a=b`, `redis://db?token=***&a=b`],
      ]
    ) {
      assert.equal(errorMessageOf(new TypeError(text)), shown, text);
    }
  });

  it("hides the value of a credential in a libpq key=value connection string, quoted ('…', \\' escapes) or not", () => {
    for (
      const [text, shown] of [
        [
          "host=db user=admin password=hunter2 dbname=x",
          "host=db user=admin password=*** dbname=x",
        ],
        [
          String.raw`host=db password='hun ter2' PASSWORD = 'it\'s \\ a' dbname=x`,
          "host=db password=*** PASSWORD = *** dbname=x",
        ],
        [
          `connect to "host=db sslpassword=a&b#c port=5432" failed`,
          `connect to "host=db sslpassword=*** port=5432" failed`,
        ],
        [
          String.raw`host=db password="hun ter2" secret = "it\"s 'a'" dbname=x`,
          "host=db password=*** secret = *** dbname=x",
        ],
        // A quote left open (the message cut inside it) hides all that follows.
        ["host=db password='hun ter2 dbname=x", "host=db password=***"],
        [`host=db password="hun ter2 dbname=x`, "host=db password=***"],
        // The server's own words, without a value, unchanged.
        [
          `password authentication failed for user "admin"`,
          `password authentication failed for user "admin"`,
        ],
      ]
    ) {
      assert.equal(errorMessageOf(new Error(text)), shown, text);
    }
  });

  it("hides a credential's value written name: value, as in JSON ('…' or \"…\" names too) and YAML, up to the next space or quote, a quoted value whole", () => {
    for (
      const [text, shown] of [
        [
          `body {"user":"admin","password":"hunter2"} refused`,
          `body {"user":"admin","password":***} refused`,
        ],
        [`{"api_key": "abc", "a": 1}`, `{"api_key": ***, "a": 1}`],
        [`{'client_secret': 'x y', 'n': 2}`, `{'client_secret': ***, 'n': 2}`],
        [`{"token":12345,"n":2}`, `{"token":***"n":2}`],
        ["password: hunter2\nhost: db", "password: ***\nhost: db"],
        [
          "auth failed (sslpassword : s3cret, user: admin)",
          "auth failed (sslpassword : *** user: admin)",
        ],
        ["PASSWORD:hunter2", "PASSWORD:***"],
        // JSON inside a JSON string (its quotes escaped): hidden to the string's end.
        [
          String.raw`body "{\"user\":\"admin\",\"password\":\"hunter2\"}" refused`,
          String.raw`body "{\"user\":\"admin\",\"password\":*** refused`,
        ],
        [String.raw`{\"token\": \"abc\"}`, String.raw`{\"token\": ***`],
        // Words that hold a credential's name, or no value after it, unchanged.
        ["token bucket refilled: 3 tokens", "token bucket refilled: 3 tokens"],
        ["12 checks passed: all", "12 checks passed: all"],
        ["tokens: 3, passes: 2", "tokens: 3, passes: 2"],
        ["Invalid username or password.", "Invalid username or password."],
      ]
    ) {
      assert.equal(errorMessageOf(new Error(text)), shown, text);
    }
  });

  it("hides a query credential whose name is percent-encoded (pass%77ord), and a value holding %26 up to the next literal &", () => {
    for (
      const [text, shown] of [
        ["redis://h/0?pass%77ord=hunter2&db=1", "redis://h/0?pass%77ord=***&db=1"],
        [
          "redis://h/0?%70%41%53%53%57%4f%52%44=hunter2 x",
          "redis://h/0?%70%41%53%53%57%4f%52%44=*** x",
        ],
        [
          "postgresql://db/x?ssl%70assword=a&client%5Fsecret=b&api%5fkey=c",
          "postgresql://db/x?ssl%70assword=***&client%5Fsecret=***&api%5fkey=***",
        ],
        [
          "postgresql://db/x?password=hun%26ter2&sslmode=require",
          "postgresql://db/x?password=***&sslmode=require",
        ],
        [
          "postgresql://db/x?pass%77ord=hun%26ter2%3D&sslmode=require",
          "postgresql://db/x?pass%77ord=***&sslmode=require",
        ],
        // Other encoded names unchanged.
        ["https://h/a?na%6De=x&pass%65s=2", "https://h/a?na%6De=x&pass%65s=2"],
      ]
    ) {
      assert.equal(errorMessageOf(new Error(text)), shown, text);
    }
  });

  it("hides an Authorization header's value (its scheme and credentials), as name: value or name=value, any case; Proxy-Authorization and X-Api-Key too", () => {
    for (
      const [text, shown] of [
        [
          "GET /x failed, Authorization: Bearer abc.def.ghi (401)",
          "GET /x failed, Authorization: *** (401)",
        ],
        ["authorization=Basic dXNlcjpw next", "authorization=*** next"],
        [`{"Authorization":"Bearer abc"}`, `{"Authorization":***}`],
        ["AUTHORIZATION: tok123", "AUTHORIZATION: ***"],
        // A value without a scheme cannot be told from one with it: the next word hidden too.
        ["authorization: tok123 x y", "authorization: *** y"],
        ["Proxy-Authorization: Basic dXNlcjpw", "Proxy-Authorization: ***"],
        // Digest's parameters, quoted or not, each after a comma.
        [
          `Authorization: Digest username="bob", realm="x y", nonce=abc, response="6629fae4" (401)`,
          "Authorization: *** (401)",
        ],
        ["X-Api-Key: sk_live_abc x", "X-Api-Key: *** x"],
        // The words alone unchanged.
        ["authorization failed for key k1", "authorization failed for key k1"],
        ["authorized: false", "authorized: false"],
      ]
    ) {
      assert.equal(errorMessageOf(new Error(text)), shown, text);
    }
  });

  it("hides them in the message of pg's own error for a connection string it cannot parse (no server contacted)", async () => {
    const password = "Zk9/q+Hunter2";
    const pool = new pg.Pool({ connectionString: `postgresql://app:${password}@127.0.0.1:1/app` });
    try {
      let error: unknown;
      try {
        await pool.query("SELECT 1"); // throws at once, parsing the connection string
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof TypeError, String(error));
      // Deno quotes the whole URL in the message; Node does not quote it.
      assert.equal(errorMessageOf(error), error.message.replace(`app:${password}@`, "***@"));
      assert.ok(!errorMessageOf(error).includes("Hunter2"), errorMessageOf(error));
    } finally {
      await pool.end();
    }
  });

  it("answers long adversarial text at once (no backtracking blow-up)", () => {
    for (
      const text of [
        "a://" + "@".repeat(1e5),
        "a://" + "x".repeat(1e5),
        "a://".repeat(3e4),
        "a://@".repeat(3e4),
        "password='" + "\\'".repeat(5e4),
        'password="' + '\\"'.repeat(5e4),
        '?token="' + "x".repeat(1e5),
        "e".repeat(790) + " a://" + "x".repeat(1e5),
        "?password=".repeat(1e4),
        "x".repeat(1e5) + "token=",
        "a_".repeat(5e4) + "=",
        "password" + " ".repeat(1e5),
        "password:".repeat(1e4),
        '"token"' + " ".repeat(1e5) + "x",
        "?" + "%41".repeat(3e4),
        "?" + "a%".repeat(5e4),
        "?" + "%70".repeat(3e4) + "x",
        "&pass%77".repeat(1e4),
        "authorization: " + "a".repeat(1e5),
        "authorization:" + " a".repeat(5e4),
        "authorization" + " ".repeat(1e5),
        "Authorization: Bearer" + " ".repeat(1e5),
        "Authorization: Digest " + ",".repeat(1e5),
        "Authorization: Digest " + ',"'.repeat(5e4),
        "Authorization: Digest " + 'a="b",'.repeat(2e4),
        String.raw`\"password\":` + String.raw`\"`.repeat(5e4),
      ]
    ) {
      const start = performance.now();
      errorMessageOf(new Error(text));
      assert.ok(
        performance.now() - start < 250,
        `${text.slice(0, 10)}…: ${performance.now() - start} ms`,
      );
    }
  });
});

describe("isBug", () => {
  it("a TypeError, RangeError, ReferenceError or SyntaxError (subclasses too) is a bug; any other value, or one that cannot be read, is not; never throws", () => {
    class StoreFault extends TypeError {}
    for (const bug of [TypeError, RangeError, ReferenceError, SyntaxError, StoreFault]) {
      assert.equal(isBug(new bug("x")), true, bug.name);
    }
    for (const other of [new Error("ECONNRESET"), new EvalError("x"), "TypeError", null, {}]) {
      assert.equal(isBug(other), false, String(other));
    }
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(isBug(proxy), false);
  });
});
