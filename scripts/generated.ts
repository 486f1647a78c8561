/**
 * Writing a generated data file, or checking that the committed one is current: shared by the generators
 * (`gen_lexicon.ts`, `gen_zh_glossary.ts`).
 *
 * @module
 */

/** A generated file's text and what bounds and describes it. */
export interface Generated {
  /** Where the file goes. */
  out: URL;
  /** Its whole text. */
  body: string;
  /** The bound on its size, in bytes: generation fails above it. */
  maxBytes: number;
  /** The command that regenerates it, named when the committed file is stale. */
  command: string;
  /** What was written, after the path ("62,466 words"). */
  summary: string;
}

/**
 * Writes `file.body` to `file.out`; with `check`, writes nothing and exits 1 when the committed file
 * differs. Throws when the text is over its bound.
 */
export async function writeGenerated(file: Generated, check: boolean): Promise<void> {
  const bytes = new TextEncoder().encode(file.body).length;
  const name = file.out.pathname.split("/").slice(-3).join("/");
  if (bytes > file.maxBytes) throw new Error(`${name} would be ${bytes} bytes (bound ${file.maxBytes})`);
  if (check) {
    const current = await Deno.readTextFile(file.out).catch(() => "");
    if (current !== file.body) {
      console.error(`${name} is stale: run ${file.command}`);
      Deno.exit(1);
    }
    return;
  }
  await Deno.writeTextFile(file.out, file.body);
  console.error(`wrote ${file.out.pathname}: ${file.summary}, ${bytes} bytes`);
}
