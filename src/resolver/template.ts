/**
 * Argument templates: a ready-to-fill arguments object for a tool's input
 * schema, bounded so a huge schema cannot blow up a resolve answer.
 *
 * @module
 */

/** Most fields an argument template lists. */
export const TEMPLATE_MAX_FIELDS = 48;

/** Most UTF-8 bytes of field names an argument template lists. */
export const TEMPLATE_MAX_NAME_BYTES = 2048;

/** Placeholder for a required field. */
export const REQUIRED_PLACEHOLDER = "<value>";

/** A bounded argument template. */
export interface ArgumentTemplate {
  /** Required field names (within the bounds), in schema order. */
  required_fields: string[];
  /** Required fields map to `"<value>"`, optional ones to `null`; required fields come first. */
  argument_template: Record<string, string | null>;
  /** True when fields were left out; call describe_tool for the full schema. */
  argument_template_truncated: boolean;
}

const encoder = new TextEncoder();

/**
 * Builds the argument template of an input schema. Required fields are
 * listed first so the bounds drop optional fields before required ones.
 * Anything that is not an object schema gives an empty template.
 */
export function argumentTemplate(inputSchema: unknown): ArgumentTemplate {
  const schema = inputSchema !== null && typeof inputSchema === "object"
    ? inputSchema as Record<string, unknown>
    : {};
  const props = schema.properties !== null && typeof schema.properties === "object" &&
      !Array.isArray(schema.properties)
    ? Object.keys(schema.properties as Record<string, unknown>)
    : [];
  const requiredList = Array.isArray(schema.required)
    ? [...new Set(schema.required.filter((r): r is string => typeof r === "string"))]
    : [];
  const required = new Set(requiredList);
  // Required fields in schema order, then required fields the schema forgot to declare, then optional ones.
  const ordered = [
    ...props.filter((p) => required.has(p)),
    ...requiredList.filter((r) => !props.includes(r)),
    ...props.filter((p) => !required.has(p)),
  ];
  const entries: [string, string | null][] = [];
  let bytes = 0;
  let truncated = false;
  for (const name of ordered) {
    const size = encoder.encode(name).length;
    if (entries.length >= TEMPLATE_MAX_FIELDS || bytes + size > TEMPLATE_MAX_NAME_BYTES) {
      truncated = true;
      break;
    }
    bytes += size;
    entries.push([name, required.has(name) ? REQUIRED_PLACEHOLDER : null]);
  }
  return {
    required_fields: entries.filter(([, v]) => v !== null).map(([k]) => k),
    // fromEntries defines own properties, so a field named __proto__ stays a field.
    argument_template: Object.fromEntries(entries),
    argument_template_truncated: truncated,
  };
}
