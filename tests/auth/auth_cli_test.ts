/**
 * The README's promises of `mcphub auth login | status | logout`, run in this process (so coverage sees
 * src/auth and src/cli/auth.ts) against the OAuth fixture server: an interactive login with `--no-browser`
 * (the test plays the user's browser: it opens the printed URL), its flags and their errors, the status
 * table and its JSON, and logout. Never a token in any output.
 */
import assert from "node:assert/strict";
import { startOAuthServer } from "../fixtures/oauth_server.ts";
import { type CliRun, DENO, FIXTURE, q, runCliHere, sandbox, writeConfig } from "../helpers.ts";

/** A config with the OAuth-protected server `prot`, a stdio server and a server with a static header. */
async function setup(dir: string, url: string): Promise<{ config: string; db: string }> {
  const config = await writeConfig(
    dir,
    `servers:
  prot:
    url: ${q(url)}
  local:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  static:
    url: ${q(url)}
    headers: { Authorization: "Bearer fixed-not-oauth" }
`,
  );
  return { config, db: `${dir}/store/mcphub.db` };
}

/**
 * `auth login prot --no-browser` as a user runs it: once the URL is printed, the "browser" (this test)
 * opens it; the fixture approves at once and redirects to the command's loopback listener.
 */
async function interactiveLogin(args: string[], env: Record<string, string>): Promise<CliRun> {
  let opened: Promise<Response> | undefined;
  const run = await runCliHere(args, {
    env,
    onErr: (text) => {
      const url = text.match(/^ {2}(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m)?.[1];
      if (url && !opened) opened = fetch(url);
    },
  });
  assert.ok(opened, `the authorization URL was printed:\n${run.err}`);
  const page = await opened;
  assert.equal(page.status, 200, "the loopback listener answered the redirect");
  await page.body?.cancel();
  return run;
}

Deno.test("auth login --no-browser prints the URL and waits for the redirect; status shows it; logout forgets it", async () => {
  await using box = await sandbox();
  await using as = await startOAuthServer();
  const { config, db } = await setup(box.home, as.url);
  const cli = (...args: string[]) => runCliHere(["--config", config, "--db", db, ...args], { env: box.env });
  const login = `mcphub --config ${config} --db ${db} auth login prot`;

  // Before: not logged in, and the command to log in (the server with a static header is not listed).
  const before = await cli("auth", "status");
  assert.equal(before.code, 0, before.err);
  assert.deepEqual(before.out.split("\n").map((l) => l.trimEnd()), [
    "SERVER  STATUS         EXPIRES  SCOPES  AUTHORIZATION SERVER",
    "prot    not logged in",
    "",
    `Log in with: ${login}`,
    "",
  ]);

  // The interactive login: the URL on stderr, then the wait for the redirect; the result on stdout.
  const run = await interactiveLogin(
    ["--config", config, "--db", db, "auth", "login", "prot", "--no-browser", "--timeout", "60"],
    box.env,
  );
  assert.equal(run.code, 0, run.err);
  assert.match(run.err, /^Open this URL to log in to "prot":\n\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/m);
  assert.match(run.err, /code_challenge_method=S256/);
  assert.match(run.err, /^Waiting for the redirect to http:\/\/127\.0\.0\.1:\d+\/\S* \(up to 60s\)…$/m);
  assert.doesNotMatch(run.err, /opened in your browser/);
  assert.match(
    run.out,
    /^Logged in to "prot": access token expires in (?:1h0m|59m) \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\), scopes tools, refreshable\.\nA running gateway picks this up within a second; no restart needed\.\n$/,
  );
  assert.deepEqual([as.counts.registrations, as.counts.authorizations, as.counts.codeGrants], [1, 1, 1]);

  // Status: the table row and the JSON, never a token.
  const after = await cli("auth", "status");
  assert.equal(after.code, 0, after.err);
  const lines = after.out.split("\n");
  assert.equal(lines[0]!.trimEnd(), "SERVER  STATUS     EXPIRES               SCOPES  AUTHORIZATION SERVER");
  assert.match(
    lines[1]!,
    /^prot {4}logged in {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}tools {3}http:\/\/127\.0\.0\.1:\d+\/?$/,
  );
  assert.equal(lines.length, 3, after.out);
  const json = await cli("auth", "status", "prot", "--json");
  assert.equal(json.code, 0, json.err);
  const status = JSON.parse(json.out);
  assert.equal(status.store, db);
  assert.equal(status.servers.length, 1);
  const row = status.servers[0];
  assert.deepEqual(
    { ...row, expires_at: "x", authorization_server: "x" },
    {
      server: "prot",
      url: as.url,
      status: "logged_in",
      expires_at: "x",
      refreshable: true,
      scopes: ["tools"],
      grant: "authorization_code",
      client: "registered",
      authorization_server: "x",
    },
  );
  assert.ok(Date.parse(row.expires_at) > Date.now());
  for (const token of as.issued) {
    for (const text of [run.out, run.err, after.out, json.out]) {
      assert.ok(!text.includes(token), "a token shown");
    }
  }

  // Logout: the row is gone; a second logout has nothing to delete.
  const out = await cli("auth", "logout", "prot");
  assert.equal(out.code, 0, out.err);
  assert.equal(out.out, `Logged out of "prot": its tokens and registered client are deleted from ${db}.\n`);
  const again = await cli("auth", "logout", "prot");
  assert.equal(again.out, '"prot" was not logged in; nothing to delete.\n');
  const gone = JSON.parse((await cli("auth", "status", "--json")).out);
  assert.equal(gone.servers[0].status, "not_logged_in");
  assert.equal(gone.servers[0].client, "none");
  // A server removed from the config can still be logged out of.
  assert.equal((await cli("auth", "logout", "gone")).out, '"gone" was not logged in; nothing to delete.\n');
});

Deno.test("auth login and logout: each flag's and each server's error names the fix", async () => {
  await using box = await sandbox();
  await using as = await startOAuthServer();
  const { config, db } = await setup(box.home, as.url);
  const cli = (...args: string[]) => runCliHere(["--config", config, "--db", db, ...args], { env: box.env });
  const cases: [string[], number, RegExp][] = [
    [["auth", "login"], 2, /^error: name one server: mcphub auth login SERVER\n/],
    [["auth", "login", "prot", "local"], 2, /^error: name one server: mcphub auth login SERVER\n/],
    [
      ["auth", "login", "prot", "--timeout", "0"],
      2,
      /^error: --timeout takes seconds \(a positive number\), got "0"\n/,
    ],
    [
      ["auth", "login", "prot", "--timeout", "soon"],
      2,
      /^error: --timeout takes seconds \(a positive number\), got "soon"\n/,
    ],
    [["auth", "login", "prot", "--bogus"], 2, /^error: Unknown option '--bogus'/],
    [
      ["auth", "login", "nope"],
      1,
      /^error: no server "nope" in \S+mcphub\.yaml; remote servers: prot, static\n$/,
    ],
    [
      ["auth", "login", "local"],
      1,
      /^error: server "local" is a stdio server \(command:\); OAuth logins are for remote servers \(url:\)\n$/,
    ],
    [
      ["auth", "login", "static"],
      1,
      /^error: server "static" sends a static Authorization header \(servers\.static\.headers\); remove it to use OAuth\n$/,
    ],
    [["auth", "logout"], 2, /^error: name one server: mcphub auth logout SERVER\n/],
    [["auth", "logout", "local"], 1, /^error: server "local" is a stdio server/],
    [["auth", "status", "prot", "local"], 2, /^error: name at most one server\n/],
  ];
  for (const [args, code, err] of cases) {
    const r = await cli(...args);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.err}`);
    assert.match(r.err, err, args.join(" "));
    assert.equal(r.out, "", args.join(" "));
  }
  // Nothing reached the authorization server.
  assert.deepEqual([as.counts.registrations, as.counts.authorizations], [0, 0]);
});

Deno.test("auth login --timeout: no redirect in time ends the login with the fix, nothing stored", async () => {
  await using box = await sandbox();
  await using as = await startOAuthServer();
  const { config, db } = await setup(box.home, as.url);
  // The URL is printed and nobody opens it: after 1 s the command gives up.
  const r = await runCliHere(
    ["--config", config, "--db", db, "auth", "login", "prot", "--no-browser", "--timeout", "1"],
    { env: box.env },
  );
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /^Open this URL to log in to "prot":/m);
  assert.match(r.err, /^error: .*no redirect came back within 1s; run the command again\n$/m);
  assert.equal(r.out, "");
  const status = JSON.parse(
    (await runCliHere(["--config", config, "--db", db, "auth", "status", "--json"], { env: box.env })).out,
  );
  assert.equal(status.servers.find((s: { server: string }) => s.server === "prot").status, "not_logged_in");
});
