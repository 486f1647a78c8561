/**
 * The house's checks over `src/`: no import circle between files and none between rooms (a room is a folder of
 * `src/`; type-only imports aside, dynamic `import()` included), no import of the v1 SDK
 * (`@modelcontextprotocol/sdk`) outside the files {@linkcode V1_IMPORTERS} names (the runtime's move to v2,
 * docs/v2-migration.md: the list only shrinks), and the size of every room with its largest file.
 *
 * ```sh
 * deno run --allow-read scripts/house.ts          # exits 1 naming each circle (part of `deno task ok`)
 * deno run --allow-read scripts/house.ts --sizes  # lines per room, share of src/, largest file
 * ```
 *
 * @module
 */
import { dirname, join, normalize, relative } from "node:path";
import { parseArgs } from "node:util";

/**
 * The `src/` files still allowed to import the v1 SDK, each with why (docs/v2-migration.md, steps 5–7). A
 * file leaves the list when it moves to v2; a new v1 import anywhere else fails the house.
 */
export const V1_IMPORTERS: Record<string, string> = {};

/** Any import or re-export of the v1 SDK, type-only ones included (`@modelcontextprotocol/sdk…`). */
const V1_IMPORT =
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](?:npm:\/?)?@modelcontextprotocol\/sdk(?:[@/][^"']*)?["']|\bimport\(\s*["'](?:npm:\/?)?@modelcontextprotocol\/sdk(?:[@/][^"']*)?["']\s*\)/m;

/** The files of `files` that import the v1 SDK but are not in `allowed` (paths as `files` has them). */
export function strayV1Imports(files: Map<string, string>, allowed = V1_IMPORTERS): string[] {
  return [...files].filter(([path, text]) => !Object.hasOwn(allowed, path) && V1_IMPORT.test(text)).map((
    [p],
  ) => p)
    .sort();
}

/** One `src/` file's runtime imports of other `src/` files (repo-relative paths). */
export type ImportGraph = Map<string, Set<string>>;

// A static import or re-export with its clause, or a dynamic import (not in a type position).
const STATIC = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["'](\.{1,2}\/[^"']+)["']/gm;
const BARE = /^\s*import\s+["'](\.{1,2}\/[^"']+)["']/gm;
const DYNAMIC = /(?<!typeof\s)\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** Whether an import clause brings in only types (`type { A }`, `{ type A, type B }`). */
function typeOnly(typeKeyword: string | undefined, clause: string): boolean {
  if (typeKeyword) return true;
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!.split(",").map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith("type "));
}

/** The runtime imports of one file's text, resolved against its path. */
export function importsOf(path: string, text: string): string[] {
  const out: string[] = [];
  const at = (spec: string) => out.push(normalize(join(dirname(path), spec)));
  // Comments out first: a doc example must not count.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  for (const m of code.matchAll(STATIC)) if (!typeOnly(m[2], m[3]!)) at(m[4]!);
  for (const m of code.matchAll(BARE)) at(m[1]!);
  for (const m of code.matchAll(DYNAMIC)) at(m[1]!);
  return out;
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile && path.endsWith(".ts")) yield path;
  }
}

/** Every `.ts` file under `root` (repo-relative) with its text. */
export async function readTree(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const path of walk(root)) files.set(path, await Deno.readTextFile(path));
  return files;
}

/** The graph of runtime imports between the given files. */
export function importGraph(files: Map<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [path, text] of files) {
    graph.set(path, new Set(importsOf(path, text).filter((target) => files.has(target) && target !== path)));
  }
  return graph;
}

/** The strongly connected components with more than one member: each is an import circle. */
export function circles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** The room of a `src/` file: its first folder (`src/hub/hub.ts` → `hub`). */
export function roomOf(path: string, root = "src"): string {
  const rest = relative(root, path).split(/[\\/]/);
  return rest.length > 1 ? rest[0]! : ".";
}

/** The graph between rooms, and for each edge one file import that makes it. */
export function roomGraph(
  graph: ImportGraph,
  root = "src",
): { rooms: Map<string, Set<string>>; why: Map<string, string> } {
  const rooms = new Map<string, Set<string>>();
  const why = new Map<string, string>();
  for (const [from, targets] of graph) {
    const a = roomOf(from, root);
    if (!rooms.has(a)) rooms.set(a, new Set());
    for (const to of targets) {
      const b = roomOf(to, root);
      if (a === b) continue;
      rooms.get(a)!.add(b);
      if (!why.has(`${a} ${b}`)) why.set(`${a} ${b}`, `${from} → ${to}`);
    }
  }
  return { rooms, why };
}

/** A circle's edges written out, one import each. */
function describeCircle(
  members: string[],
  graph: Map<string, Set<string>>,
  why?: Map<string, string>,
): string {
  const set = new Set(members);
  const lines: string[] = [];
  for (const a of members) {
    for (const b of graph.get(a) ?? []) {
      if (set.has(b)) lines.push(`    ${why?.get(`${a} ${b}`) ?? `${a} → ${b}`}`);
    }
  }
  return lines.join("\n");
}

/** Lines per room, its share of the total, and its largest file. */
export function roomSizes(files: Map<string, string>, root = "src"): {
  room: string;
  lines: number;
  share: number;
  files: number;
  largest: string;
  largestLines: number;
}[] {
  const rooms = new Map<string, { lines: number; files: number; largest: string; largestLines: number }>();
  let total = 0;
  for (const [path, text] of files) {
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    total += lines;
    const room = roomOf(path, root);
    const r = rooms.get(room) ?? { lines: 0, files: 0, largest: "", largestLines: 0 };
    r.lines += lines;
    r.files++;
    if (lines > r.largestLines) Object.assign(r, { largest: path, largestLines: lines });
    rooms.set(room, r);
  }
  return [...rooms].map(([room, r]) => ({ room, ...r, share: r.lines / total }))
    .sort((a, b) => b.lines - a.lines);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { sizes: { type: "boolean" }, root: { type: "string", default: "src" } },
  });
  const root = values.root!;
  const files = await readTree(root);
  if (values.sizes) {
    const sizes = roomSizes(files, root);
    const total = sizes.reduce((n, r) => n + r.lines, 0);
    console.log(`room           lines  share  files  largest file (lines)`);
    for (const r of sizes) {
      console.log(
        `${r.room.padEnd(12)} ${String(r.lines).padStart(7)} ${(100 * r.share).toFixed(1).padStart(5)}% ${
          String(r.files).padStart(6)
        }  ${r.largest} (${r.largestLines})`,
      );
    }
    console.log(`${"total".padEnd(12)} ${String(total).padStart(7)}`);
    const data = /\.(json)$|_data\.ts$/;
    const biggest = [...files].filter(([p]) => !data.test(p)).map(([p, t]) =>
      [p, t.split("\n").length - 1] as const
    )
      .sort((a, b) => b[1] - a[1]).slice(0, 5);
    console.log(`largest files (generated data aside): ${biggest.map(([p, n]) => `${p} ${n}`).join(", ")}`);
  } else {
    const graph = importGraph(files);
    const fileCircles = circles(graph);
    const { rooms, why } = roomGraph(graph, root);
    const roomCircles = circles(rooms);
    const strays = strayV1Imports(files);
    for (const path of strays) {
      console.error(
        `${path} imports the v1 SDK (@modelcontextprotocol/sdk): take it from the v2 packages through src/mcp/ (docs/v2-migration.md); ${
          Object.keys(V1_IMPORTERS).length
            ? `only ${Object.keys(V1_IMPORTERS).join(", ")} still may`
            : "no file of src/ may"
        }`,
      );
    }
    if (strays.length) Deno.exit(1);
    for (const c of fileCircles) console.error(`import circle between files:\n${describeCircle(c, graph)}`);
    for (const c of roomCircles) {
      console.error(`import circle between rooms ${c.join(", ")}:\n${describeCircle(c, rooms, why)}`);
    }
    if (fileCircles.length + roomCircles.length > 0) {
      console.error(
        `house: ${fileCircles.length} circle(s) between files and ${roomCircles.length} between rooms of ${root}/ (type-only imports aside); break each by moving the shared part down a room`,
      );
      Deno.exit(1);
    }
    console.error(`house: no import circle among ${graph.size} files in ${rooms.size} rooms of ${root}/`);
  }
}
