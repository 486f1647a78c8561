/**
 * Code mode's names: the meta-tool's and its declarations resource's (no imports: the host side names
 * them without loading the room, see `light.ts`).
 *
 * @module
 */

/** The meta-tool's name. */
export const RUN_CODE = "run_code";

/** The resource that carries the declarations. */
export const TYPES_URI = "mcphub://code/types.d.ts";
