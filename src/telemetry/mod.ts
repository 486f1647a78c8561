/**
 * Telemetry for operators: OpenTelemetry spans per the MCP semantic conventions (through Deno's built-in
 * OpenTelemetry), W3C trace context in `params._meta`, and metrics in the Prometheus text format.
 *
 * @module
 */
export {
  type ClientInit,
  ClientOperation,
  GAUGES,
  loadTelemetry,
  type LoadTelemetryOptions,
  methodLabel,
  type OperationError,
  parseTraceparent,
  type ServerInit,
  ServerOperation,
  Telemetry,
  type TelemetryOptions,
  type TraceMeta,
  WireTrace,
} from "./telemetry.ts";
export {
  Counter,
  DURATION_BUCKETS,
  type GaugeReading,
  Histogram,
  type Labels,
  MAX_SERIES,
  renderGauge,
} from "./metrics.ts";
