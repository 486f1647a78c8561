import assert from "node:assert/strict";

/**
 * The README and the docs pages hold together: every relative link (a file, or a `#anchor` in a markdown
 * file, with GitHub's heading slugs) resolves, and README.md links every page in docs/.
 */

const ROOT = new URL("../../", import.meta.url);

/** One markdown file: its path from the repository root and its text. */
interface Page {
  path: string;
  text: string;
}

/** The text outside fenced code blocks, as lines (a fence's own lines and its contents are blanked). */
function proseLines(text: string): string[] {
  const lines = text.split("\n");
  let fence: string | undefined;
  return lines.map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === undefined) {
      if (open) {
        fence = open[1]!;
        return "";
      }
      return line;
    }
    if (open && open[1]!.startsWith(fence) && line.trim() === open[1]) fence = undefined;
    return "";
  });
}

/** `line` without inline code spans. */
function withoutCode(line: string): string {
  return line.replace(/(`+)(?:(?!\1).)+?\1/g, "");
}

/** GitHub's anchor for a heading: markup dropped, lower case, punctuation removed, spaces as hyphens. */
export function slug(heading: string): string {
  // Code spans keep their content as written; outside them, links and images become their text, and
  // emphasis and inline HTML tags are dropped (`_` only at a word's edge, as GFM reads it).
  const text = heading.split(/(`[^`]*`)/).map((part, i) =>
    i % 2 === 1 ? part.slice(1, -1) : part
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/\*{1,3}([^*]+)\*{1,3}/g, "$1")
      .replace(/(^|[^\p{L}\p{N}])_{1,3}([^_]+?)_{1,3}(?![\p{L}\p{N}])/gu, "$1$2")
  ).join("");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a page's headings make, with GitHub's `-1`, `-2` … for repeated ones. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The targets of a page's inline links and images, outside code. */
export function links(text: string): string[] {
  const out: string[] = [];
  for (const line of proseLines(text)) {
    for (
      const m of withoutCode(line).matchAll(
        /!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
      )
    ) {
      out.push(m[1]!);
    }
  }
  return out;
}

/** The path from the root of `target` linked from `from`, or undefined when it leaves the repository. */
function resolve(from: string, target: string): string | undefined {
  const base = new URL(from, "file:///repo/");
  const url = new URL(target, base);
  if (!url.pathname.startsWith("/repo/")) return undefined;
  return decodeURIComponent(url.pathname.slice("/repo/".length));
}

/**
 * What is broken in `pages`: each relative link whose file is not in `files` (nor a directory in it) or
 * whose `#anchor` is not a heading of the markdown page it names, and each docs/*.md page that README.md
 * does not link. `files` holds every path of the repository the links may name.
 */
export function problems(pages: Page[], files: Set<string>): string[] {
  const byPath = new Map(pages.map((p) => [p.path, p]));
  const out: string[] = [];
  const fromReadme = new Set<string>();
  for (const page of pages) {
    for (const target of links(page.text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const hash = target.indexOf("#");
      const file = hash < 0 ? target : target.slice(0, hash);
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = file === "" ? page.path : resolve(page.path, file);
      if (path === undefined) {
        out.push(`${page.path}: ${target}: leaves the repository`);
        continue;
      }
      const isDir = [...files].some((f) => f.startsWith(path.replace(/\/?$/, "/")));
      if (!files.has(path) && !isDir) {
        out.push(`${page.path}: ${target}: no such file`);
        continue;
      }
      if (page.path === "README.md") fromReadme.add(path);
      if (anchor !== undefined && path.endsWith(".md")) {
        const linked = byPath.get(path);
        if (!linked) {
          out.push(`${page.path}: ${target}: the anchor's page is not checked`);
        } else if (!anchors(linked.text).has(anchor)) {
          out.push(`${page.path}: ${target}: no heading with the anchor #${anchor} in ${path}`);
        }
      }
    }
  }
  for (const page of pages) {
    if (/^docs\/[^/]+\.md$/.test(page.path) && !fromReadme.has(page.path)) {
      out.push(`README.md does not link ${page.path}`);
    }
  }
  return out;
}

/** Every file of the repository, as paths from its root (dependencies and build output aside). */
async function repositoryFiles(): Promise<Set<string>> {
  const out = new Set<string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) {
        if (![".git", "node_modules", "dist"].includes(entry.name)) await walk(`${path}/`);
      } else {
        out.add(path);
      }
    }
  };
  await walk("");
  return out;
}

/** README.md and every docs/*.md page. */
async function docPages(): Promise<Page[]> {
  const paths = ["README.md"];
  for await (const entry of Deno.readDir(new URL("docs/", ROOT))) {
    if (entry.isFile && entry.name.endsWith(".md")) paths.push(`docs/${entry.name}`);
  }
  return await Promise.all(
    paths.sort().map(async (path) => ({ path, text: await Deno.readTextFile(new URL(path, ROOT)) })),
  );
}

Deno.test("README.md and docs/*.md: every relative link resolves, and README.md links every docs page", async () => {
  const pages = await docPages();
  assert.ok(pages.length > 1, "docs/ has pages");
  assert.deepEqual(problems(pages, await repositoryFiles()), []);
});

Deno.test("GitHub heading slugs: markup dropped, punctuation removed, spaces as hyphens, repeats numbered", () => {
  assert.equal(slug("Pinning (rug-pull defence)"), "pinning-rug-pull-defence");
  assert.equal(slug("The `mcphub` command"), "the-mcphub-command");
  assert.equal(slug("Intelligence: call records and stats"), "intelligence-call-records-and-stats");
  assert.equal(slug("Bounded, lossless results"), "bounded-lossless-results");
  assert.equal(slug("snake_case and [a link](x.md)"), "snake_case-and-a-link");
  assert.equal(slug("`get_result` and `poll_result`"), "get_result-and-poll_result");
  assert.equal(slug("**Bold** and _emphasis_"), "bold-and-emphasis");
  assert.deepEqual(
    [...anchors("# A\n\n## Setup\n\n```sh\n# not a heading\n```\n\n## Setup\n")],
    ["a", "setup", "setup-1"],
  );
});

Deno.test("a broken file, a missing anchor, a link out of the repository and an unlinked page are each found", () => {
  const pages: Page[] = [
    {
      path: "README.md",
      text: "[ok](docs/a.md#setup) [gone](docs/gone.md) [bad](docs/a.md#nowhere) [up](../x.md) " +
        "[web](https://example.com) `[code](docs/gone.md)`\n\n```md\n[fenced](docs/gone.md)\n```\n",
    },
    { path: "docs/a.md", text: "# A\n\n## Setup\n\n[self](#a) [back](../README.md#nope)\n" },
    { path: "docs/b.md", text: "# B\n" },
  ];
  const files = new Set(["README.md", "docs/a.md", "docs/b.md"]);
  assert.deepEqual(problems(pages, files), [
    "README.md: docs/gone.md: no such file",
    "README.md: docs/a.md#nowhere: no heading with the anchor #nowhere in docs/a.md",
    "README.md: ../x.md: leaves the repository",
    "docs/a.md: ../README.md#nope: no heading with the anchor #nope in README.md",
    "README.md does not link docs/b.md",
  ]);
});
