import assert from "node:assert/strict";
import { DENO, ROOT, tempDir } from "../helpers.ts";

const ECHO = `${ROOT}tests/fixtures/host_input_echo.ts`;

for (
  const [label, permissions] of [
    ["", ["--allow-all"]],
    // A locked build may not read /dev/stdin and /dev/stdout: fd 0 and 1 are compared by node:fs then.
    [" (no read permission on /dev)", ["--allow-all", "--deny-read=/dev/stdin,/dev/stdout"]],
  ] as const
) {
  Deno.test(`hostInput reads a pipe on the event loop and keeps every byte of chunks written apart${label}`, async () => {
    await pipeRoundTrip(permissions);
  });
}

async function pipeRoundTrip(permissions: readonly string[]): Promise<void> {
  const child = new Deno.Command(DENO, {
    args: ["run", "--no-prompt", ...permissions, ECHO],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const sent: Uint8Array<ArrayBuffer>[] = [];
  for (let i = 0; i < 40; i++) {
    // Pieces that end mid-line, some bigger than a pipe's buffer, with the reader catching up in between.
    const piece = new Uint8Array(i % 10 === 0 ? 200_000 : 37 + i).fill(0x61 + (i % 26));
    if (i % 3 === 0) piece[piece.length - 1] = 0x0a;
    sent.push(piece);
    await writer.write(piece);
    if (i % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await writer.close();
  const [status, out, err] = await Promise.all([
    child.status,
    new Response(child.stdout).bytes(),
    new Response(child.stderr).text(),
  ]);
  assert.equal(status.code, 0, err);
  assert.deepEqual(out, new Uint8Array(await new Blob(sent).arrayBuffer()));
  if (Deno.build.os === "linux") assert.equal(err, "nonblocking yes\n");
}

Deno.test({
  name: "hostInput falls back to Deno's stdin for a file and for /dev/null",
  ignore: Deno.build.os === "windows",
}, async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/input.txt`;
  const text = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'.repeat(5000);
  await Deno.writeTextFile(path, text);
  // The shell redirects a file to stdin: Deno.Command has no file stdin of its own.
  const fromFile = await new Deno.Command("sh", {
    args: ["-c", `exec "$0" run --no-prompt --allow-all "$1" < "$2"`, DENO, ECHO, path],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(fromFile.stderr);
  assert.equal(fromFile.code, 0, err);
  assert.equal(new TextDecoder().decode(fromFile.stdout), text);
  if (Deno.build.os === "linux") assert.equal(err, "nonblocking no\n");

  const fromNull = await new Deno.Command(DENO, {
    args: ["run", "--no-prompt", "--allow-all", ECHO],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(fromNull.code, 0, new TextDecoder().decode(fromNull.stderr));
  assert.equal(fromNull.stdout.length, 0);
});
