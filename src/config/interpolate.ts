/**
 * `${VAR}` expansion in config values. `$$` is a literal `$`, so `$${VAR}` is the literal text `${VAR}`;
 * a `$` followed by anything else stays as written.
 *
 * @module
 */

/** The environment variables are read from. */
export interface Environment {
  get(key: string): string | undefined;
}

/** The result of {@linkcode expandVariables}: the value, or why there is none (never the value itself). */
export type Expansion =
  | {
    ok: true;
    value: string; /** The values substituted for `${VAR}`s, to redact from output. */
    used: string[];
  }
  | { ok: false; unset: string }
  | { ok: false; malformed: true };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces every `${NAME}` in `text` with the variable's value. A variable set to the empty string
 * counts as set.
 *
 * @param text the raw config value
 * @param env where values come from
 */
export function expandVariables(text: string, env: Environment): Expansion {
  if (!text.includes("$")) return { ok: true, value: text, used: [] };
  const used: string[] = [];
  let value = "";
  let index = 0;
  while (index < text.length) {
    const dollar = text.indexOf("$", index);
    if (dollar === -1) {
      value += text.slice(index);
      break;
    }
    value += text.slice(index, dollar);
    const next = text[dollar + 1];
    if (next === "$") {
      value += "$";
      index = dollar + 2;
    } else if (next === "{") {
      const close = text.indexOf("}", dollar + 2);
      const name = close === -1 ? "" : text.slice(dollar + 2, close);
      if (!NAME.test(name)) return { ok: false, malformed: true };
      const found = env.get(name);
      if (found === undefined) return { ok: false, unset: name };
      value += found;
      if (found !== "") used.push(found);
      index = close + 1;
    } else {
      value += "$";
      index = dollar + 1;
    }
  }
  return { ok: true, value, used };
}
