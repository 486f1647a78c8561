/**
 * `store:`: where the gateway keeps spooled results, call records, the tool-list cache and tool pins — a
 * SQLite file path, or a `postgres://` / `postgresql://` URL for a store shared by replicated gateways.
 * `${VAR}` is expanded (keep the password out of the file); `--db` and `$MCPHUB_DB` take precedence.
 *
 * @module
 */
import { isScalar } from "./yaml_nodes.ts";
import { describe, type Field, type Reader } from "./reader.ts";
import { type Environment, expandVariables } from "./interpolate.ts";

/** A `postgres://` or `postgresql://` URL. */
const PG_URL = /^postgres(?:ql)?:\/\//i;

/**
 * Reads `store:`. A URL with a literal password is refused (it would sit in the file in clear): write
 * the password as `${VAR}`, or leave it to `PGPASSWORD` / `~/.pgpass`.
 */
export function readStore(reader: Reader, field: Field, env: Environment | undefined): string | undefined {
  const raw = isScalar(field.node) ? field.node.value : undefined;
  if (typeof raw !== "string" || raw.trim() === "") {
    return reader.fail(
      field,
      `expected a store file path or a postgres:// URL, got ${describe(field.node)}`,
    );
  }
  const text = raw.trim();
  if (PG_URL.test(text) && /^[^:]+:\/\/[^:/?#@]*:(?!\$\{)[^@/?#]+@/.test(text)) {
    return reader.fail(
      field,
      "the URL holds a literal password; write it as ${VAR} (e.g. postgres://mcphub:${PGPASSWORD}@db/mcphub) " +
        "or leave it out and set PGPASSWORD",
    );
  }
  if (!env) return text;
  const expanded = expandVariables(text, env);
  if (expanded.ok) return expanded.value;
  return reader.fail(
    field,
    "unset" in expanded
      ? `environment variable ${expanded.unset} is not set`
      : 'malformed ${VAR} reference; write ${NAME} (or $$ for a literal "$")',
  );
}
