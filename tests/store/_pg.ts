/**
 * A throwaway PostgreSQL cluster for the tests of the shared store: Debian's `postgresql` server (installed
 * by the test setup, scripts/setup_system.ts), a cluster in a temp dir owned by the `postgres` user (initdb
 * refuses root), listening on 127.0.0.1 and a free port, with a password (so the tests can check that it
 * is never printed). One cluster per test process, started on first use and stopped when the process ends.
 *
 * @module
 */
import { assertPresent, ignoreWithout, pgBinDir, postgresMissing } from "../_system.ts";
import { freePort } from "../helpers.ts";

/** A running cluster. */
export interface PgCluster {
  /** `postgres://mcphub:PASSWORD@127.0.0.1:PORT/postgres` */
  url: string;
  password: string;
  port: number;
  dir: string;
  /** A fresh database in the cluster, as a URL (tests do not see each other's rows). */
  database(name?: string): Promise<string>;
  /** Stops the server (fast shutdown); {@linkcode PgCluster.start} brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

const PASSWORD = "pg-test-s3cret-Qx7v";
let cluster: Promise<PgCluster> | undefined;
let counter = 0;

async function run(cmd: string, args: string[], options: { stdin?: string } = {}): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed (${out.code}): ${text}`);
  return text;
}

function install(): string {
  // Installing PostgreSQL is the test setup's job (scripts/setup_system.ts), never a test's.
  const missing = postgresMissing();
  if (missing) throw new Error(missing);
  return pgBinDir()!;
}

/** Why the PostgreSQL tests cannot run here (with what to install), or undefined. */
export const PG_MISSING: string | undefined = postgresMissing();

/**
 * A test that needs PostgreSQL: ignored without it (saying what to install), except under CI=true on Linux,
 * where it fails.
 */
export function pgTest(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  Deno.test({
    name,
    ignore: ignoreWithout("the PostgreSQL tests", PG_MISSING),
    async fn(t) {
      assertPresent("the PostgreSQL tests", PG_MISSING);
      await fn(t);
    },
  });
}

/** As the `postgres` user when we are root (initdb and postgres refuse root). */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return Deno.uid() === 0 ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
}

async function create(): Promise<PgCluster> {
  const bin = install();
  const dir = await Deno.makeTempDir({ prefix: "mcphub-pg-" });
  const data = `${dir}/data`;
  const pwfile = `${dir}/pw`;
  await Deno.writeTextFile(pwfile, PASSWORD + "\n");
  if (Deno.uid() === 0) await run("chown", ["-R", "postgres:postgres", dir]);
  await run(...asPostgres(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "mcphub",
    `--pwfile=${pwfile}`,
    "--auth=scram-sha-256",
    "-E",
    "UTF8",
    "--no-sync",
  ]));
  // PostgreSQL needs its port before it starts (its socket file is named after it; port 0 is refused), so
  // a free port is found first; if another process takes it before the server binds it, the first start
  // fails with "could not bind" in the log: it is started again on another port, and says so on stderr.
  let port = freePort();
  const start = async () => {
    // -l: the server's output goes to a file, so it never holds the test's pipes.
    await run(...asPostgres(`${bin}/pg_ctl`, [
      "-D",
      data,
      "-l",
      `${dir}/log`,
      "-w",
      "-t",
      "60",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      "start",
    ]));
  };
  const stop = async () => {
    await run(...asPostgres(`${bin}/pg_ctl`, ["-D", data, "-m", "fast", "-w", "stop"])).catch(() => {});
  };
  for (let attempt = 1;; attempt++) {
    try {
      await start();
      break;
    } catch (error) {
      const log = await Deno.readTextFile(`${dir}/log`).catch(() => "");
      if (attempt === 5 || !/could not bind|Address already in use/.test(log)) throw error;
      console.error(`_pg.ts: port ${port} was taken before PostgreSQL bound it; starting it on another`);
      await Deno.writeTextFile(`${dir}/log`, "");
      port = freePort();
    }
  }
  const stopSync = () => {
    const [cmd, args] = asPostgres(`${bin}/pg_ctl`, ["-D", data, "-m", "immediate", "-w", "stop"]);
    new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).outputSync();
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // left for the OS
    }
  };
  globalThis.addEventListener("unload", stopSync);
  const url = `postgres://mcphub:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const psql = `${bin}/psql`;
  return {
    url,
    password: PASSWORD,
    port,
    dir,
    stop,
    start,
    async database(name) {
      const db = name ?? `t${Deno.pid}_${++counter}`;
      // psql reads the password from the environment.
      await run("env", [
        `PGPASSWORD=${PASSWORD}`,
        psql,
        "-X",
        "-q",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "mcphub",
        "-d",
        "postgres",
        "-c",
        `CREATE DATABASE ${db}`,
      ]);
      return `postgres://mcphub:${PASSWORD}@127.0.0.1:${port}/${db}`;
    },
  };
}

/** The test process's shared cluster (started on first use; tests take a database of their own in it). */
export function pgCluster(): Promise<PgCluster> {
  cluster ??= create();
  return cluster;
}

/** A cluster of the caller's own (for a test that stops and restarts the server). */
export function startPgCluster(): Promise<PgCluster> {
  return create();
}
