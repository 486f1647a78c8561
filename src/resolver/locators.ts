/**
 * URLs and file paths in a query: their segments mean less than prose, but
 * they imply a capability (a URL -> web, a path -> file), and a path plus a
 * verb names a file operation ("save it to /tmp/a.md" -> write file).
 *
 * @module
 */
import { isEnglishWord } from "./lexicon.ts";
import { splitWords, stem, STOP_WORDS } from "./tokenize.ts";

/** Weight of a directory or file-name segment of a path or URL in the query. */
const SEGMENT_WEIGHT = 0.3;
/** Weight of the capability a path or URL implies (`file`, `web`). */
const IMPLIED_WEIGHT = 0.5;
/** Top-level directories of Unix (the Filesystem Hierarchy Standard) and macOS. */
const TOP_DIRECTORIES =
  "tmp|etc|var|home|usr|opt|srv|mnt|media|root|bin|sbin|lib|boot|dev|proc|sys|run|data|Users|Volumes|Applications|Library|private";
const URL = /\bhttps?:\/\/[^\s<>"'`)\]]+/gi;
const PATH = new RegExp(
  String
    .raw`(?<=^|[\s(["'\x60])(?:~|\.{1,2})?(?:\/[\p{L}\p{N}_.@%+-]+){2,}\/?|(?<=^|[\s(["'\x60])~(?:\/[\p{L}\p{N}_.@%+-]+)+\/?|` +
    String.raw`(?<=^|[\s(["'\x60])[A-Za-z]:\\[^\s"'\x60]+|` +
    // One segment is a path when it is a top-level directory of Unix or macOS ("what's in /tmp", "under /srv");
    // another word after a slash ("/login", "/help") may be a route or a command.
    String.raw`(?<=^|[\s(["'\x60])\/(?:${TOP_DIRECTORIES})\/?(?![\p{L}\p{N}_.@%+\/-])`,
  "gu",
);
/** Top-level domains that mark a bare host name (lower case: "done.It works" is two sentences). */
const TLDS = "com org net gov edu io co ai dev app info me so uk de fr jp cn ru us ca au nl it es br".split(
  " ",
);
/**
 * A web address typed without its scheme: a host name ending in a common top-level domain, with an
 * optional path (`www.baidu.com`, `docs.python.org/3/whatsnew`). Not part of an e-mail address or of a
 * longer dotted word; file names (`README.md`, `app.py`) end in no such domain.
 */
const BARE_HOST = new RegExp(
  String.raw`(?<![\p{L}\p{N}@._\/-])(?:[A-Za-z0-9][A-Za-z0-9-]{0,62}\.)+(?:${TLDS.join("|")})` +
    String.raw`(?:\/[^\s<>"'\x60)\]]*)?(?![\p{L}\p{N}@_-])`,
  "gu",
);
const HOST_NOISE = new Set(["www", "html", "htm", "php", ...TLDS]);

/** Weight of the file operation a path plus a verb implies. */
export const PATH_INTENT_WEIGHT = 1;

/** Verbs that, next to a file path, name a file operation, and the terms of that operation. */
export const PATH_INTENTS: readonly [ReadonlySet<string>, readonly string[]][] = [
  ["save write store export output generate create draft compose produce report", "write file"],
  ["read open load view show print display", "read file"],
  ["list show", "list directory"],
  ["delete remove", "delete file"],
  ["move rename", "move file"],
  ["edit modify change update append", "edit file"],
].map(([verbs, targets]) => [new Set(verbs!.split(" ").map(stem)), targets!.split(" ").map(stem)]);

/**
 * Verbs that, next to a directory path (no file extension), also mean listing it first: "read the
 * articles in /a/papers" reads files the agent must find by listing the directory. Only reading verbs: a
 * directory written to ("save it in /a/reports") needs no listing.
 */
export const DIRECTORY_INTENT: readonly [ReadonlySet<string>, readonly string[]] = [
  new Set("read open load view".split(" ").map(stem)),
  ["list", "directory"].map(stem),
];

/**
 * Weight of the `id` term a pasted identifier implies: a request that names one item by its number
 * ("arxiv 2203.12277", "issue 48213", "story 44490510") wants the tool that takes an identifier, not a
 * search. Tuned on the LiveMCPBench dev half (0.3: no change; 0.5–1: the same ranks).
 */
export const IDENTIFIER_WEIGHT = 0.6;

/**
 * A pasted identifier: a token of at least five characters (letters, digits, dots, dashes) with a run of
 * five or more digits (`2203.12277`, `NCT04280705`, `1712345678.123456`). Not a year, a price or a
 * short count; a hash without such a run (`4f9a2c81b7`) does not count either. A match starts only where
 * a token starts (not after a dot or dash inside it), so the scan is linear in the text.
 */
const PASTED_ID =
  /(?<![\p{L}\p{N}/.-])(?=[\p{L}\p{N}.-]*\d{5})[\p{L}\p{N}][\p{L}\p{N}.-]{4,}(?![\p{L}\p{N}/])/u;

/** Whether the query text (paths and URLs already taken out) holds a pasted identifier. */
export function hasPastedIdentifier(text: string): boolean {
  return PASTED_ID.test(text);
}

/** What one URL or path in the query contributes. */
export interface Span {
  /** A file system path (rather than a URL). */
  path: boolean;
  /** A file system path without a file extension: a directory. */
  directory: boolean;
  /** Words that count as typed (file extensions, host names). */
  words: { word: string; weight: number }[];
  /** Lower-weight terms that do not count towards coverage. */
  extras: { term: string; weight: number }[];
}

/** Reads URLs and file paths out of the query: their parts mean less than prose, but imply a capability. */
export function extractLocators(text: string): { rest: string; spans: Span[] } {
  const spans: Span[] = [];
  const segmentsOf = (segments: string[], span: Span) => {
    for (const seg of segments) {
      for (const w of splitWords(seg)) {
        for (const part of [...w.parts, ...(w.compound ? [w.compound] : [])]) {
          if (!STOP_WORDS.has(part) && part.length > 1) {
            span.extras.push({ term: stem(part), weight: SEGMENT_WEIGHT });
          }
        }
      }
    }
  };
  const webAddress = (match: string) => {
    const span: Span = {
      path: false,
      directory: false,
      words: [],
      extras: [{ term: "url", weight: IMPLIED_WEIGHT }, { term: "web", weight: IMPLIED_WEIGHT }],
    };
    const body = trimPunctuation(match).replace(/^https?:\/\//i, "").split(/[?#]/)[0]!;
    const [host = "", ...path] = body.split("/");
    for (const label of host.toLowerCase().split(".")) {
      if (label && !HOST_NOISE.has(label) && !/^\d+$/.test(label)) {
        span.words.push({ word: label, weight: 0.8 });
      }
    }
    segmentsOf(path.filter((p) => p.length <= 40), span);
    spans.push(span);
    return " ";
  };
  // A host name typed without its scheme ("open example.com") is a web address too.
  let rest = text.replace(URL, webAddress).replace(BARE_HOST, webAddress);
  // A name in capitals joined by underscores ("DATABASE_URL", "NODE_ENV=production") is an environment
  // variable's: its words name no object of the request, and the value set after "=" is an argument.
  rest = rest.replace(ENV_NAME, (match: string) => {
    const span: Span = {
      path: false,
      directory: false,
      words: [{ word: "env", weight: ENV_WEIGHT }],
      extras: [],
    };
    span.extras.push({ term: stem("variable"), weight: ENV_WEIGHT });
    segmentsOf([match.split("=")[0]!], span);
    spans.push(span);
    return " ";
  });
  const pathSpan = (match: string) => {
    const path = trimPunctuation(match);
    const segments = path.split(/[\\/]+/).filter((p) => p && p !== "~" && p !== "." && p !== "..");
    const last = segments.at(-1) ?? "";
    const dot = last.lastIndexOf(".");
    const span: Span = { path: true, directory: false, words: [], extras: [] };
    if (dot > 0 && dot < last.length - 1) {
      const extension = last.slice(dot + 1).toLowerCase();
      span.words.push({ word: extension, weight: 0.7 });
      segments[segments.length - 1] = last.slice(0, dot);
      span.extras.push({ term: stem("file"), weight: IMPLIED_WEIGHT });
      const kind = FILE_KINDS.get(extension);
      if (kind) span.extras.push({ term: stem(kind), weight: IMPLIED_WEIGHT });
    } else {
      span.directory = true;
      span.extras.push({ term: stem("directory"), weight: IMPLIED_WEIGHT });
      span.extras.push({ term: stem("file"), weight: IMPLIED_WEIGHT * 0.6 });
    }
    segmentsOf(segments, span);
    spans.push(span);
    return " ";
  };
  rest = rest.replace(PATH, pathSpan);
  // A relative path to a file ("notes/todo.md", "src/app.ts") is a path too.
  rest = rest.replace(RELATIVE_FILE, pathSpan);
  // A relative path to a directory ("whats inside src/utils", "everything under tests/") is a path too.
  rest = rest.replace(RELATIVE_DIRECTORY, (match) => isRelativeDirectory(match) ? pathSpan(match) : match);
  // A user's own standard folder ("my downloads", "the Desktop", "my Documents folder") is a directory.
  rest = rest.replace(USER_FOLDER, (match) => pathSpan(match.split(/\s+/)[1]!) + " ");
  // A file named without a directory ("open notes.txt", "README.md") is a path too.
  rest = rest.replace(FILE_NAME, (match, name: string, extension: string) => {
    const ext = extension.toLowerCase();
    const span: Span = {
      path: true,
      directory: false,
      words: [{ word: ext, weight: 0.7 }],
      extras: [{ term: stem("file"), weight: IMPLIED_WEIGHT }],
    };
    const kind = FILE_KINDS.get(ext);
    if (kind) span.extras.push({ term: stem(kind), weight: IMPLIED_WEIGHT });
    segmentsOf([name], span);
    spans.push(span);
    return match.startsWith(name) ? " " : `${match[0]} `;
  });
  // A dotfile ("open .eslintrc.json", "overwrite .gitignore", "when was .env.production last modified") is a
  // file named, its name's words a path's segments; ".log files" or "*.md" name a type (below).
  rest = rest.replace(DOTFILE, (match: string) => {
    const parts = match.slice(1).split(".");
    const last = parts.length > 1 ? parts.at(-1)!.toLowerCase() : "";
    const span: Span = {
      path: true,
      directory: false,
      words: [],
      extras: [{ term: stem("file"), weight: IMPLIED_WEIGHT }],
    };
    // A dotfile is a project's or a tool's configuration, text, unless its extension says otherwise.
    const kind = FILE_KINDS.has(last) ? FILE_KINDS.get(last) : "text";
    if (kind) span.extras.push({ term: stem(kind), weight: IMPLIED_WEIGHT });
    segmentsOf(parts, span);
    spans.push(span);
    return " ";
  });
  // A project's conventional file with no extension ("the README", "the Dockerfile") is a text file.
  rest = rest.replace(CONVENTIONAL_FILE, (name: string) => {
    if (CAPITALS_ONLY.has(name.toLowerCase()) && name !== name.toUpperCase()) return name;
    const span: Span = {
      path: true,
      directory: false,
      words: [{ word: name.toLowerCase(), weight: 0.7 }],
      extras: [{ term: stem("file"), weight: IMPLIED_WEIGHT }, {
        term: stem("text"),
        weight: IMPLIED_WEIGHT,
      }],
    };
    spans.push(span);
    return " ";
  });
  // A file type named by its extension ("all .log files", "*.md"): files of that kind, a pattern to match.
  rest = rest.replace(EXTENSION, (_match, lead: string, extension: string) => {
    const ext = extension.toLowerCase();
    const span: Span = {
      path: true,
      directory: false,
      words: [{ word: ext, weight: 0.7 }],
      extras: [{ term: stem("file"), weight: IMPLIED_WEIGHT }, {
        term: stem("pattern"),
        weight: IMPLIED_WEIGHT,
      }],
    };
    const kind = FILE_KINDS.get(ext);
    if (kind) span.extras.push({ term: stem(kind), weight: IMPLIED_WEIGHT });
    spans.push(span);
    return `${lead} `;
  });
  return { rest, spans };
}

/**
 * An environment variable's name as programs spell it: capitals and digits joined by underscores (`API_BASE`,
 * `NODE_ENV`), with the value it is set to (`=production`) if one follows.
 */
const ENV_NAME = /(?<![\p{L}\p{N}_$.-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\p{L}\p{N}_.-])(?:=[^\s,;]*)?/gu;

/**
 * Weight of what an environment variable's name implies (`env`, `variable`): below a typed word, so a request that
 * says what the value is ("STRIPE_KEY … as an encrypted secret") keeps its own object first.
 */
const ENV_WEIGHT = 0.35;

/**
 * A standard folder of a user's home (the desktop's download, desktop, documents, pictures, music and videos
 * folders) named as the user's own: "my downloads", "the Desktop"; "Documents", "Pictures", "Music" and
 * "Videos" only capitalized, as the folder is named ("my documents" may be a service's documents).
 */
const USER_FOLDER = /\b(?:my|the)\s+(?:[Dd]ownloads|[Dd]esktop|Documents|Pictures|Music|Videos)\b/g;

/** What a file's extension says of its content: text, image, audio or video. */
export const FILE_KINDS: ReadonlyMap<string, string> = new Map([
  ...("txt md markdown json jsonl yaml yml csv tsv log xml html htm ini toml cfg conf env py ts tsx js jsx mjs " +
    "java go rs rb cc cpp hpp cs php sh bash zsh sql css scss tex rst")
    .split(" ").map((e) => [e, "text"] as const),
  ...("png jpg jpeg gif svg webp bmp tif tiff ico heic").split(" ").map((e) => [e, "image"] as const),
  ...("mp3 wav flac ogg oga m4a aac opus").split(" ").map((e) => [e, "audio"] as const),
  ...("mp4 mov avi mkv webm m4v").split(" ").map((e) => [e, "video"] as const),
  ...("pdf doc docx xls xlsx ppt pptx odt ods zip gz tgz tar 7z rar bin exe dmg iso").split(" ").map((e) =>
    [e, ""] as const
  ),
]);

/** A file extension standing alone: `.log`, `*.md` (after a space or the start). */
const EXTENSION = new RegExp(
  String.raw`(^|\s)\*?\.(${[...FILE_KINDS.keys()].join("|")})(?![\p{L}\p{N}@_\/.-])`,
  "giu",
);

/**
 * A dotfile named on its own: a dot, a name and maybe more dotted parts (`.gitignore`, `.env.production`,
 * `.eslintrc.json`), not a type of files (".log files", "*.md") nor inside a path or a longer word.
 */
const DOTFILE =
  /(?<=^|[\s(["'\x60])\.(?=\p{L})[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)*(?![\p{L}\p{N}@_\/-]|\.[\p{L}\p{N}])(?!\s+files?\b)/gu;

/**
 * The conventional files of a project, named without an extension: README, CHANGELOG, Makefile, Dockerfile and
 * the like in any case, LICENSE in capitals ("the license" is mostly the word). Standing alone, not inside a
 * path or a longer name.
 */
const CONVENTIONAL_FILE =
  /(?<![\p{L}\p{N}@._\/\\-])(?:readme|changelog|makefile|dockerfile|jenkinsfile|vagrantfile|procfile|gemfile|rakefile|license|licence|contributing|authors|notice|codeowners)(?![\p{L}\p{N}@_\/\\-]|\.[\p{L}\p{N}])/giu;

/** Conventional file names that are also common words: files only when typed in capitals ("LICENSE"). */
const CAPITALS_ONLY: ReadonlySet<string> = new Set([
  "license",
  "licence",
  "contributing",
  "authors",
  "notice",
]);

/**
 * A file name without a directory: a name, a dot and an extension {@link FILE_KINDS} knows, standing alone
 * (`notes.txt`, `README.md`, `.env` is not one: no name). Not inside a longer dotted word or an address.
 */
const FILE_NAME = new RegExp(
  String.raw`(?<![\p{L}\p{N}@._\/\-])([\p{L}\p{N}_-]{1,64}(?:\.[\p{L}\p{N}_-]{1,64}){0,3})\.(${
    [...FILE_KINDS.keys()].join("|")
  })(?![\p{L}\p{N}@_\/-]|\.[\p{L}\p{N}])`,
  "giu",
);

/**
 * A relative path to a file: directories, a slash each, and a file name whose extension {@link FILE_KINDS}
 * knows (`notes/todo.md`; not "and/or", "TCP/IP").
 */
const RELATIVE_FILE = new RegExp(
  String.raw`(?<=^|[\s(["'\x60])(?:[\p{L}\p{N}_@%+-][\p{L}\p{N}_.@%+-]*\/)+[\p{L}\p{N}_.@%+-]*\.(?:${
    [...FILE_KINDS.keys()].join("|")
  })(?![\p{L}\p{N}@_\/-])`,
  "giu",
);

/**
 * A candidate relative path to a directory: names joined by slashes, with no file extension at the end
 * (`src/utils`, `tests/`, `a/b/c/`); {@link isRelativeDirectory} tells a path from "and/or" or "TCP/IP".
 */
const RELATIVE_DIRECTORY =
  /(?<=^|[\s(["'\x60])[\p{L}\p{N}_@%+-][\p{L}\p{N}_.@%+-]*(?:\/[\p{L}\p{N}_@%+-][\p{L}\p{N}_.@%+-]*)*\/?(?=$|[\s,;:!?)"'\x60]|\.(?:\s|$))/gu;

/**
 * Whether a slashed token names a directory rather than alternatives ("read/write", "and/or", "he/she"),
 * an acronym pair ("TCP/IP", "CI/CD"), a number ("24/7", "12/05/2026") or a unit ("km/h"): a trailing slash
 * or two slashes, or else a name that is no English word ("src/utils", "node_modules/react"); never a
 * stop word, a capitalized acronym or a number as a name.
 */
function isRelativeDirectory(match: string): boolean {
  if (!match.includes("/")) return false;
  const trailing = match.endsWith("/");
  const names = match.split("/").filter((n) => n !== "");
  if (names.length === 0 || (names.length === 1 && !trailing)) return false;
  if (names.some((n) => n.length < 2 || /^[\p{Lu}\p{N}]+$/u.test(n) || STOP_WORDS.has(n.toLowerCase()))) {
    return false;
  }
  if (trailing || names.length >= 3) return true;
  return names.some((n) => !isEnglishWord(n.toLowerCase(), stem));
}

/** Drops trailing sentence punctuation (a loop, not `/[.,;:!?]+$/`, which is quadratic on a run of dots). */
function trimPunctuation(text: string): string {
  let end = text.length;
  while (end > 0 && ".,;:!?".includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}
