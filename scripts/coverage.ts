/**
 * Line and branch coverage of `src/`, per room (`src/<room>/`), from the whole test suite.
 *
 * Usage: deno run -A scripts/coverage.ts [--report-only] [--floor] [test paths…] (or `deno task coverage`).
 * It runs `deno test -A --coverage=coverage/raw` on `tests/` (or the paths given) with `DENO_COVERAGE_DIR`
 * set to the same directory, so every Deno process a test spawns (the CLI, the gateway, fixture servers,
 * workers) writes its profile there too; then `deno coverage --lcov` merges them and this prints one row per
 * room: lines hit / lines found, and branches. `--report-only` skips the run and reports what
 * coverage/raw holds. `--floor` compares each room with the floors of docs/testing-coverage.md and exits 1
 * when one is under its floor. A failing test run still reports (and exits with the run's code).
 *
 * @module
 */
import { parseArgs } from "node:util";

const ROOT = new URL("../", import.meta.url).pathname;
const RAW = `${ROOT}coverage/raw`;
const DOC = `${ROOT}docs/testing-coverage.md`;

/** Covered and found lines and branches of one file or room. */
export interface Tally {
  linesFound: number;
  linesHit: number;
  branchesFound: number;
  branchesHit: number;
}

/** Per-file tallies of an lcov text, keyed by the path after `src/` (`auth/login.ts`); other files are left out. */
export function parseLcov(text: string): Map<string, Tally> {
  const files = new Map<string, Tally>();
  let current: Tally | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("SF:")) {
      const path = line.slice(3);
      const at = path.indexOf("/src/");
      current = at < 0 ? undefined : { linesFound: 0, linesHit: 0, branchesFound: 0, branchesHit: 0 };
      if (current) files.set(path.slice(at + 5), current);
    } else if (current && line.startsWith("LF:")) current.linesFound = Number(line.slice(3));
    else if (current && line.startsWith("LH:")) current.linesHit = Number(line.slice(3));
    else if (current && line.startsWith("BRF:")) current.branchesFound = Number(line.slice(4));
    else if (current && line.startsWith("BRH:")) current.branchesHit = Number(line.slice(4));
  }
  return files;
}

/** Files' tallies summed per room: the first directory under `src/` (`main` for files right in `src/`). */
export function perRoom(files: Map<string, Tally>): Map<string, Tally> {
  const rooms = new Map<string, Tally>();
  for (const [path, t] of files) {
    const room = path.includes("/") ? path.slice(0, path.indexOf("/")) : "main";
    const r = rooms.get(room) ?? { linesFound: 0, linesHit: 0, branchesFound: 0, branchesHit: 0 };
    r.linesFound += t.linesFound;
    r.linesHit += t.linesHit;
    r.branchesFound += t.branchesFound;
    r.branchesHit += t.branchesHit;
    rooms.set(room, r);
  }
  return new Map([...rooms].sort(([a], [b]) => a.localeCompare(b)));
}

/** A percentage with one decimal (100.0 when nothing was found). */
export function percent(hit: number, found: number): number {
  return found ? Math.floor((hit / found) * 1000) / 10 : 100;
}

/** The rooms' table as Markdown. */
export function table(rooms: Map<string, Tally>): string {
  const rows = ["| room | lines | line % | branch % |", "|---|---:|---:|---:|"];
  const total = { linesFound: 0, linesHit: 0, branchesFound: 0, branchesHit: 0 };
  for (const [room, t] of rooms) {
    rows.push(
      `| ${room} | ${t.linesHit}/${t.linesFound} | ${percent(t.linesHit, t.linesFound).toFixed(1)} | ${
        percent(t.branchesHit, t.branchesFound).toFixed(1)
      } |`,
    );
    for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
  }
  rows.push(
    `| **all** | ${total.linesHit}/${total.linesFound} | ${
      percent(total.linesHit, total.linesFound).toFixed(1)
    } | ${percent(total.branchesHit, total.branchesFound).toFixed(1)} |`,
  );
  return rows.join("\n");
}

/** The floors of docs/testing-coverage.md: rows `| room | floor % |` of the table under its "## Floors". */
export function parseFloors(text: string): Map<string, number> {
  const floors = new Map<string, number>();
  const start = text.indexOf("\n## Floors");
  if (start < 0) return floors;
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  for (const m of section.matchAll(/^\|\s*`?([a-z_]+)`?\s*\|\s*(\d+(?:\.\d+)?)\s*\|/gm)) {
    floors.set(m[1]!, Number(m[2]));
  }
  return floors;
}

/** Rooms under their floor, as lines naming room, measured and floor. */
export function underFloor(rooms: Map<string, Tally>, floors: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [room, floor] of floors) {
    const t = rooms.get(room);
    const measured = t ? percent(t.linesHit, t.linesFound) : 0;
    if (measured < floor) out.push(`${room}: ${measured.toFixed(1)}% of lines, under its floor of ${floor}%`);
  }
  return out;
}

async function run(command: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  const { code } = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env,
    stdout: "inherit",
    stderr: "inherit",
  })
    .output();
  return code;
}

/** The task: run (unless `--report-only`), report per room, check floors (with `--floor`). */
export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { "report-only": { type: "boolean" }, floor: { type: "boolean" } },
    allowPositionals: true,
  });
  let status = 0;
  if (!values["report-only"]) {
    await Deno.remove(RAW, { recursive: true }).catch(() => {});
    await Deno.mkdir(RAW, { recursive: true });
    // Subprocess coverage: every deno process a test spawns inherits DENO_COVERAGE_DIR (the test sandbox of
    // tests/helpers.ts passes it on) and writes its profile next to the test runner's.
    status = await run(Deno.execPath(), [
      "test",
      "-A",
      `--coverage=${RAW}`,
      "--coverage-raw-data-only",
      ...(positionals.length ? positionals : ["tests/"]),
    ], {
      DENO_COVERAGE_DIR: RAW,
    });
  }
  const lcov = await new Deno.Command(Deno.execPath(), {
    args: ["coverage", RAW, "--lcov", `--include=^file://${ROOT}src/`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!lcov.success) return lcov.code || 1;
  const rooms = perRoom(parseLcov(new TextDecoder().decode(lcov.stdout)));
  console.log(table(rooms));
  if (values.floor) {
    const under = underFloor(rooms, parseFloors(await Deno.readTextFile(DOC)));
    for (const line of under) console.error(`coverage: ${line}`);
    if (under.length && !status) status = 1;
  }
  return status;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
