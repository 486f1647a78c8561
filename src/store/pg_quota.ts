/**
 * The shared counts behind the HTTP listener's per-agent quotas when replicas share a PostgreSQL store
 * (issue 41): each replica's heartbeat (a row that expires), the sessions each replica has open per agent,
 * the `tools/call` places each replica holds per agent, and per agent and window the requests claimed so
 * far. A replica whose heartbeat lapses counts for nothing: its sessions and places are ignored at once
 * and deleted by the next replica that notices. Times are the caller's clock (ms since the epoch).
 *
 * @module
 */
import type { PgMigration, PgStore } from "./postgres.ts";

/** The quota tables (applied with the rest of the shared store's schema, and by the listener's own pool). */
export const pgQuotaMigrations: readonly PgMigration[] = [{
  id: "quota/1",
  sql: `
    CREATE TABLE quota_replicas (replica TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
    CREATE TABLE quota_sessions (
      place TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      replica TEXT NOT NULL REFERENCES quota_replicas ON DELETE CASCADE
    );
    CREATE INDEX quota_sessions_agent ON quota_sessions (agent);
    CREATE TABLE quota_calls (
      agent TEXT NOT NULL,
      replica TEXT NOT NULL REFERENCES quota_replicas ON DELETE CASCADE,
      held INTEGER NOT NULL,
      PRIMARY KEY (agent, replica)
    );
    CREATE TABLE quota_windows (
      agent TEXT NOT NULL,
      window_start BIGINT NOT NULL,
      window_end BIGINT NOT NULL,
      used BIGINT NOT NULL,
      last_grant BIGINT NOT NULL,
      PRIMARY KEY (agent, window_start)
    );
    -- One round-trip each. Under an agent's lock (held to the end of the statement's transaction); each
    -- statement in a volatile function takes a fresh snapshot, so it sees what the lock's last holder did.
    CREATE FUNCTION mcphub_quota_open_session(p_place TEXT, p_agent TEXT, p_replica TEXT, p_limit BIGINT, p_now BIGINT)
    RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
    DECLARE open BIGINT;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('mcphub-quota:' || p_agent));
      SELECT COUNT(*) INTO open FROM quota_sessions s JOIN quota_replicas r USING (replica)
        WHERE s.agent = p_agent AND r.expires_at >= p_now;
      IF open < p_limit THEN
        INSERT INTO quota_sessions (place, agent, replica) VALUES (p_place, p_agent, p_replica);
        RETURN -1 - open;
      END IF;
      RETURN open;
    END $$;
    CREATE FUNCTION mcphub_quota_claim_calls(p_agent TEXT, p_replica TEXT, p_want BIGINT, p_limit BIGINT, p_now BIGINT,
      OUT held BIGINT, OUT others BIGINT)
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE mine BIGINT;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('mcphub-quota:' || p_agent));
      SELECT COALESCE(SUM(c.held) FILTER (WHERE c.replica = p_replica), 0),
             COALESCE(SUM(c.held) FILTER (WHERE c.replica <> p_replica), 0)
        INTO mine, others
        FROM quota_calls c JOIN quota_replicas r USING (replica)
        WHERE c.agent = p_agent AND r.expires_at >= p_now;
      held := GREATEST(mine, LEAST(p_want, p_limit - others));
      IF held <> mine THEN
        INSERT INTO quota_calls (agent, replica, held) VALUES (p_agent, p_replica, held)
          ON CONFLICT (agent, replica) DO UPDATE SET held = EXCLUDED.held;
      END IF;
    END $$`,
}];

/** A session place a replica holds, as re-registered after its heartbeat row was lost. */
export interface QuotaPlace {
  place: string;
  agent: string;
}

/** One replica's side of the shared quota tables. Every method is one round-trip (the heartbeat three). */
export class PgQuotaLedger {
  readonly #store: PgStore;
  readonly #replica: string;

  constructor(store: PgStore, replica: string) {
    this.#store = store;
    this.#replica = replica;
  }

  /**
   * Renews this replica's heartbeat until `expiresAt` and deletes replicas whose heartbeat lapsed before
   * `now` (their sessions and places with them). True when the row was (re)created: a replica thought dead
   * then re-registers what it holds with {@linkcode PgQuotaLedger.restore}.
   */
  async heartbeat(now: number, expiresAt: number): Promise<boolean> {
    return await this.#store.run(async (sql) => {
      await sql`DELETE FROM quota_replicas WHERE expires_at < ${now} AND replica <> ${this.#replica}`;
      await sql`DELETE FROM quota_windows WHERE window_end < ${now}`;
      const [row] = await sql`
        INSERT INTO quota_replicas (replica, expires_at) VALUES (${this.#replica}, ${expiresAt})
        ON CONFLICT (replica) DO UPDATE SET expires_at = EXCLUDED.expires_at
        RETURNING (xmax = 0) AS created`;
      return Boolean(row?.created);
    });
  }

  /** Writes back the sessions and call places this replica holds (after its row was recreated). */
  async restore(places: readonly QuotaPlace[], held: ReadonlyMap<string, number>): Promise<void> {
    await this.#store.begin(async (tx) => {
      for (const { place, agent } of places) {
        await tx`INSERT INTO quota_sessions (place, agent, replica) VALUES (${place}, ${agent}, ${this.#replica})
          ON CONFLICT (place) DO NOTHING`;
      }
      for (const [agent, n] of held) {
        if (n <= 0) continue;
        await tx`INSERT INTO quota_calls (agent, replica, held) VALUES (${agent}, ${this.#replica}, ${n})
          ON CONFLICT (agent, replica) DO UPDATE SET held = EXCLUDED.held`;
      }
    });
  }

  /**
   * Opens a session place for `agent` unless its live replicas already hold `limit`: `open` is the count
   * before (this one not included).
   */
  async openSession(
    agent: string,
    place: string,
    options: { limit: number; now: number },
  ): Promise<{ admitted: boolean; open: number }> {
    const { limit, now } = options;
    const [row] = await this.#store.run((sql) =>
      sql`SELECT mcphub_quota_open_session(${place}, ${agent}, ${this.#replica}, ${limit}, ${now}) AS open`
    );
    const open = Number(row?.open ?? 0);
    // Admitted: -1 - the count before (so 0 stays a refusal's "none open" apart from an admission's).
    return open < 0 ? { admitted: true, open: -1 - open } : { admitted: false, open };
  }

  /** Gives a session place back. */
  async closeSession(place: string): Promise<void> {
    await this.#store.run((sql) => sql`DELETE FROM quota_sessions WHERE place = ${place}`);
  }

  /**
   * Raises this replica's call places for `agent` toward `want`, within what the live replicas leave of
   * `limit`; returns the places it holds now (never fewer than before) and those the others hold.
   */
  async claimCalls(
    agent: string,
    options: { want: number; limit: number; now: number },
  ): Promise<{ held: number; others: number }> {
    const { want, limit, now } = options;
    const [row] = await this.#store.run((sql) =>
      sql`SELECT held, others FROM mcphub_quota_claim_calls(${agent}, ${this.#replica}, ${want}, ${limit}, ${now})`
    );
    return { held: Number(row?.held ?? 0), others: Number(row?.others ?? 0) };
  }

  /** Lowers this replica's call places for `agent` to `held` (giving the rest back). */
  async trimCalls(agent: string, held: number): Promise<void> {
    await this.#store.run((sql) =>
      held > 0
        ? sql`UPDATE quota_calls SET held = ${held} WHERE agent = ${agent} AND replica = ${this.#replica}`
        : sql`DELETE FROM quota_calls WHERE agent = ${agent} AND replica = ${this.#replica}`
    );
  }

  /**
   * Claims up to `want` requests of `agent`'s window starting at `start` (one atomic upsert, never past
   * `limit`); returns how many were granted (0 once the window is used up).
   */
  async claimRequests(
    agent: string,
    options: { start: number; end: number; want: number; limit: number },
  ): Promise<number> {
    const { start, end, want, limit } = options;
    const rows = await this.#store.run((sql) =>
      sql`
      INSERT INTO quota_windows (agent, window_start, window_end, used, last_grant)
      VALUES (${agent}, ${start}, ${end}, LEAST(${want}::bigint, ${limit}::bigint), LEAST(${want}::bigint, ${limit}::bigint))
      ON CONFLICT (agent, window_start) DO UPDATE
        SET used = LEAST(quota_windows.used + ${want}::bigint, ${limit}::bigint),
            last_grant = LEAST(${want}::bigint, ${limit}::bigint - quota_windows.used)
        WHERE quota_windows.used < ${limit}::bigint
      RETURNING last_grant`
    );
    return Number(rows[0]?.last_grant ?? 0);
  }

  /** Deletes this replica's row and with it every session and call place it held (an orderly stop). */
  async leave(): Promise<void> {
    await this.#store.run((sql) => sql`DELETE FROM quota_replicas WHERE replica = ${this.#replica}`);
  }
}
