/**
 * The node predicates of the `yaml` package without loading it: `yaml` tags each node with
 * `Symbol.for("yaml.node.type")`, a registered symbol, so these are exactly its `isMap`, `isSeq`,
 * `isScalar` and `isAlias`, and they also recognize the nodes of {@linkcode readBlockYaml}. The start-up
 * path reads mcphub.yaml with them, and loads `yaml` only for a file outside that reader's subset.
 *
 * @module
 */
import type { Alias, Node, Scalar, YAMLMap, YAMLSeq } from "yaml";

/** The property that carries a node's kind (`yaml`'s `NODE_TYPE`). */
export const NODE_TYPE = Symbol.for("yaml.node.type");
/** The kinds of node, as `yaml` marks them. */
export const MAP = Symbol.for("yaml.map");
/** A list. */
export const SEQ = Symbol.for("yaml.seq");
/** A key–value pair of a mapping. */
export const PAIR = Symbol.for("yaml.pair");
/** A string, number, boolean or null. */
export const SCALAR = Symbol.for("yaml.scalar");
const ALIAS = Symbol.for("yaml.alias");

function kind(node: unknown): unknown {
  return typeof node === "object" && node !== null ? (node as Record<symbol, unknown>)[NODE_TYPE] : undefined;
}

/** `yaml`'s `isMap`. */
export function isMap(node: unknown): node is YAMLMap<unknown, unknown> {
  return kind(node) === MAP;
}

/** `yaml`'s `isSeq`. */
export function isSeq(node: unknown): node is YAMLSeq<unknown> {
  return kind(node) === SEQ;
}

/** `yaml`'s `isScalar`. */
export function isScalar(node: unknown): node is Scalar<unknown> {
  return kind(node) === SCALAR;
}

/** `yaml`'s `isAlias`. */
export function isAlias(node: unknown): node is Alias {
  return kind(node) === ALIAS;
}

export type { Node };
