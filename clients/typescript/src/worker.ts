// A Cyclone worker for Node.js, written from the worker protocol alone
// (SPEC sections 6, 7 and 18, docs/sql-reference.md, docs/concepts.md).
//
// The engine is the state machine; this file only claims steps, runs handlers,
// keeps their leases alive and reports back. Every report is a compare-and-set
// on (step, worker, lease_generation), so the worst a bug here can do is lose
// a lease: the engine then reclaims the step and another worker runs it.
import { Client, Pool, type ClientConfig } from 'pg';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export const VERSION = '0.1.0';

/** Throw this from a handler to dead-letter the step at once, with no retry. */
export class Permanent extends Error {
  override name = 'Permanent';
}

/**
 * Throw this from a handler to hand the step back, to run again after `seconds`
 * (0 to 365 days) on the same attempt, with no error recorded (SPEC 16).
 */
export class Snooze extends Error {
  override name = 'Snooze';
  constructor(readonly seconds: number) {
    super(`snoozed for ${seconds} s`);
  }
}

export interface StepContext {
  stepId: string; // bigint, as decimal text: ids may exceed 2^53
  runId: string;
  workflow: string; node: string; handler: string;
  attempt: number; // 1-based; a reclaim or release runs the same attempt again
  maxAttempts: number;
  input: unknown; // the run input (a JSON object for runs this engine accepted)
  deps: Record<string, unknown>; // dependency node name -> its output
  item?: unknown; // map items only (SPEC 16), when the engine returns the column
  itemIndex?: number | null;
  signal: AbortSignal; // aborted when the lease is lost, the timeout passes, or on shutdown
  readonly leaseExpiry: Date; // engine clock; moved forward by each renewal
}

export type Handler = (ctx: StepContext) => unknown;
export type Logger = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface WorkerOptions {
  dsn: string; // postgresql://... URL or libpq "host=... dbname=..." keywords
  handlers: Record<string, Handler>;
  workflows?: string[]; // claim only steps of these workflows (NULL = any)
  concurrency?: number; // handlers run at once (10)
  leaseTtlSeconds?: number; // (30) renewed every TTL/3
  pollIntervalSeconds?: number; // claim + tick without a wake-up (1); at most the TTL
  maxReclaims?: number; // passed to tick(); the same on every worker (0 = unbounded)
  shutdownGraceSeconds?: number; // after SIGTERM, how long handlers may finish (10)
  name?: string; // the lease owner; host:pid:random by default
  handleSignals?: boolean; // SIGTERM/SIGINT stop the worker (true)
  log?: Logger;
}

interface ClaimRow {
  step_id: string; run_id: string; workflow: string; node: string; handler: string;
  attempt: number; max_attempts: number; lease_generation: string; timeout_s: number | null;
  input: string | null; deps: string | null; lease_expiry: Date; item?: string | null; item_index?: number | null;
}

interface Active {
  row: ClaimRow;
  ctrl: AbortController;
  expiry: Date; claimedAt: number; // the engine's lease expiry; the claim's time on the local clock
  heartbeat?: NodeJS.Timeout; timeout?: NodeJS.Timeout;
  lost: boolean; // the engine refused the lease: drop the result, whatever it is
  abandoned: boolean; // aborted by our own shutdown: release the lease unless it completed
  settled: boolean; // the handler has returned or thrown
  done?: Promise<void>; // the whole execution, report included
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TIMER_MS = 2 ** 31 - 1; // setTimeout fires at once beyond this
const MAX_ERROR_CHARS = 32_000; // the engine keeps up to 65,536; stay well below
/** Sleep ms, or less when `until` settles first (no timer is left behind to hold the process). */
function sleep(ms: number, until?: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    const done = () => { clearTimeout(t); resolve(); };
    until?.then(done, done);
  });
}

/** Errors worth retrying: the connection, the server going away, lock conflicts. */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true; // socket error, timeout, no SQLSTATE
  return ['08', '40', '53', '57', '58'].includes(code.slice(0, 2));
}

/** pg takes URLs only; Cyclone's tools document libpq "key=value" DSNs too. */
export function pgConfig(dsn: string): ClientConfig {
  const base: ClientConfig = {
    application_name: 'cyclone-worker-ts', keepAlive: true, keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: 10_000, query_timeout: 60_000, // a hung socket must not hang the loop
  };
  if (/^postgres(ql)?:\/\//.test(dsn)) return { ...base, connectionString: dsn };
  const kv: Record<string, string> = {};
  for (const m of dsn.matchAll(/(\w+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))/g)) {
    kv[m[1]] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  return { ...base, host: kv.host, port: kv.port ? Number(kv.port) : undefined, user: kv.user,
    password: kv.password, database: kv.dbname, application_name: kv.application_name ?? base.application_name };
}

function errorText(err: unknown): string {
  let text: string;
  try { text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : `thrown: ${String(err)}`; }
  catch { text = 'thrown: (a value that cannot be shown)'; }
  return text.length > MAX_ERROR_CHARS ? text.slice(0, MAX_ERROR_CHARS) + '\n[... cut by the worker]' : text;
}

const defaultLog: Logger = (level, msg, fields) => {
  if (level === 'debug' && process.env.CYCLONE_LOG_LEVEL !== 'debug') return;
  const extra = Object.entries(fields ?? {}).map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  process.stderr.write(`${new Date().toISOString()} ${level} ${msg}${extra.join('')}\n`);
};

/**
 * The worker registry of SPEC 18, kept apart: the functions may be missing on
 * an older engine (SQLSTATE 42883), and then the worker runs without them.
 */
class Registry {
  private missingAt = 0;
  private lastError = '';
  constructor(private pool: Pool, private name: string, private info: object, private log: Logger) {}

  async register(): Promise<void> {
    if (this.missingAt && Date.now() - this.missingAt < 60_000) return; // look again once a minute
    try {
      await this.pool.query('SELECT cyclone.register_worker($1, $2::jsonb)', [this.name, JSON.stringify(this.info)]);
      this.missingAt = 0; this.lastError = '';
    } catch (err) { this.failed(err, 'register_worker'); }
  }

  async deregister(): Promise<void> {
    if (this.missingAt) return;
    try { await this.pool.query('SELECT cyclone.deregister_worker($1)', [this.name]); }
    catch (err) { this.failed(err, 'deregister_worker'); }
  }

  private failed(err: unknown, fn: string) {
    if ((err as { code?: string }).code === '42883') {
      if (!this.missingAt) this.log('warn', `cyclone.${fn} does not exist: running without the worker registry`);
      this.missingAt = Date.now();
    } else if (String(err) !== this.lastError) this.log('warn', `${fn} failed`, { error: (this.lastError = String(err)) });
  }
}

export class Worker {
  readonly name: string;
  private opts: Required<Omit<WorkerOptions, 'workflows' | 'name' | 'log'>> & { workflows: string[] | null };
  private log: Logger;
  private pool: Pool;
  private registry: Registry;
  // Executions, not step ids: a handler that lost its lease may still be running
  // when the same step comes back to this worker for its next attempt.
  private active = new Set<Active>();
  private claimSql?: string;
  private stopping = false;
  private closed = false;
  private wanted = true; // a claim is due: a wake-up, a poll, or a free slot
  private wake = () => {};
  private markStopped!: () => void;
  private stopped = new Promise<void>((r) => (this.markStopped = r));
  private cancelQueue = new Set<Active>();
  private cancelFlush?: NodeJS.Timeout;
  private troubles = new Set<string>();

  constructor(options: WorkerOptions) {
    const o = { concurrency: 10, leaseTtlSeconds: 30, pollIntervalSeconds: 1, maxReclaims: 0,
      shutdownGraceSeconds: 10, handleSignals: true, ...options, workflows: options.workflows ?? null };
    if (!Number.isInteger(o.concurrency) || o.concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    if (!(o.leaseTtlSeconds > 0 && o.leaseTtlSeconds <= 86_400)) throw new RangeError('leaseTtlSeconds must be in (0, 86400]');
    // A claim that comes back short records this worker as waiting for wake-ups
    // only until its lease TTL ends; polling at least that often keeps it there.
    if (!(o.pollIntervalSeconds > 0 && o.pollIntervalSeconds <= o.leaseTtlSeconds)) {
      throw new RangeError('pollIntervalSeconds must be positive and at most leaseTtlSeconds');
    }
    if (!Number.isInteger(o.maxReclaims) || o.maxReclaims < 0) throw new RangeError('maxReclaims must be an integer >= 0');
    if (Object.keys(o.handlers).length === 0) throw new RangeError('no handlers');
    this.opts = o;
    this.log = options.log ?? defaultLog;
    this.name = options.name ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.pool = new Pool({ ...pgConfig(o.dsn), max: Math.min(o.concurrency, 8) + 2 });
    this.pool.on('error', (err) => this.log('debug', 'idle connection lost', { error: String(err) }));
    this.registry = new Registry(this.pool, this.name, {
      handlers: Object.keys(o.handlers), workflows: o.workflows, host: hostname(), pid: process.pid,
      version: VERSION, concurrency: o.concurrency, language: 'typescript',
    }, this.log);
  }

  /** Serve until stop() (or SIGTERM/SIGINT), then shut down cleanly. */
  async run(): Promise<void> {
    const onSignal = (sig: string) => {
      if (this.stopping) { this.log('warn', `second ${sig}: exiting at once`); process.exit(1); }
      this.log('info', `${sig}: stopping`);
      this.stop();
    };
    if (this.opts.handleSignals) { process.on('SIGTERM', onSignal); process.on('SIGINT', onSignal); }
    this.log('info', 'worker started', { worker: this.name, handlers: Object.keys(this.opts.handlers) });
    try {
      const listener = this.listen();
      await this.loop();
      await this.drain();
      await listener;
    } finally {
      if (this.opts.handleSignals) { process.off('SIGTERM', onSignal); process.off('SIGINT', onSignal); }
    }
  }

  stop(): void {
    this.stopping = true;
    this.markStopped();
    this.wake();
  }

  private kick() { this.wanted = true; this.wake(); }

  /** Log a failure once, and the recovery once, however long it lasts. */
  private trouble(key: string, err?: unknown) {
    if (err === undefined) {
      if (this.troubles.delete(key)) this.log('info', `${key}: ok again`);
    } else if (!this.troubles.has(key)) {
      this.troubles.add(key);
      this.log('warn', `${key} failed; retrying`, { error: String((err as Error)?.message ?? err) });
    }
  }

  // ---- the claim loop: tick and register every poll, claim on a wake-up, a poll or a free slot

  private async loop() {
    const pollMs = this.opts.pollIntervalSeconds * 1000;
    let nextPoll = 0;
    let failures = 0;
    while (!this.stopping) {
      if (Date.now() >= nextPoll) {
        nextPoll = Date.now() + pollMs;
        this.wanted = true;
        await this.registry.register();
        try {
          const r = await this.pool.query('SELECT cyclone.tick($1)::text AS t', [this.opts.maxReclaims]);
          this.trouble('tick');
          this.log('debug', 'tick', { result: r.rows[0]?.t });
        } catch (err) { this.trouble('tick', err); } // a failing tick must not stop claims
      }
      const free = this.opts.concurrency - this.active.size;
      if (this.wanted && free > 0) {
        this.wanted = false;
        try {
          const n = await this.claim(free);
          this.trouble('claim');
          failures = 0;
          if (n === 0) await sleep(50); // a flood of wake-ups: at most 20 empty claims a second
        } catch (err) {
          this.trouble('claim', err);
          this.wanted = true;
          await sleep(Math.min(10_000, 250 * 2 ** Math.min(failures++, 6)), this.stopped);
        }
        continue;
      }
      // Nothing to claim (or no free slot): sleep until the next poll, a wake-up or a finished handler.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(0, nextPoll - Date.now()));
        this.wake = () => { clearTimeout(t); resolve(); };
      });
      this.wake = () => {};
    }
  }

  private async claim(limit: number): Promise<number> {
    this.claimSql ??= await this.buildClaimSql();
    const { rows } = await this.pool.query<ClaimRow>(this.claimSql, [this.name, Object.keys(this.opts.handlers),
      limit, `${this.opts.leaseTtlSeconds} seconds`, this.opts.workflows]);
    for (const row of rows) {
      if (this.stopping) { void this.release(row); continue; } // claimed while stopping: hand it back
      const a: Active = { row, ctrl: new AbortController(), expiry: row.lease_expiry, claimedAt: Date.now(), lost: false, abandoned: false, settled: false };
      this.active.add(a);
      a.done = this.execute(a)
        .catch((err) => this.log('error', 'bug: execution failed', { step_id: row.step_id, error: errorText(err) }))
        .finally(() => { this.active.delete(a); this.kick(); });
    }
    return rows.length;
  }

  /**
   * Columns by name, never by position. jsonb comes back as text and is parsed
   * per step: pg's own jsonb parser runs inside the query, and one value it
   * chokes on would fail the whole batch after the claim had committed.
   * item/item_index (SPEC 16) are read only when this engine's claim has them.
   */
  private async buildClaimSql(): Promise<string> {
    const { rows } = await this.pool.query(`SELECT 'item_index' = ANY(proargnames) AS has FROM pg_proc
      WHERE oid = to_regprocedure('cyclone.claim(text,text[],integer,interval,text[])')`);
    const item = rows[0]?.has ? ', item::text AS item, item_index' : '';
    return `SELECT step_id::text AS step_id, run_id::text AS run_id, workflow, node, handler, attempt, max_attempts,
        lease_generation::text AS lease_generation, extract(epoch FROM timeout)::float8 AS timeout_s,
        input::text AS input, deps::text AS deps, lease_expiry${item}
      FROM cyclone.claim($1, $2::text[], $3::int, $4::interval, $5::text[])`;
  }

  // ---- one execution: heartbeat, handler, report

  private context(a: Active): StepContext {
    const r = a.row;
    const parse = (what: string, text: string | null | undefined): unknown => {
      try { return text == null ? null : JSON.parse(text); }
      catch (err) { throw new Permanent(`cannot decode the step's ${what}: ${String(err)}`); }
    };
    const deps = parse('deps', r.deps) ?? {};
    if (typeof deps !== 'object' || Array.isArray(deps)) throw new Permanent('the step\'s deps are not a JSON object');
    return {
      stepId: r.step_id, runId: r.run_id, workflow: r.workflow, node: r.node, handler: r.handler,
      attempt: r.attempt, maxAttempts: r.max_attempts, input: parse('input', r.input),
      deps: deps as Record<string, unknown>, signal: a.ctrl.signal,
      ...('item' in r ? { item: parse('item', r.item), itemIndex: r.item_index ?? null } : {}),
      get leaseExpiry() { return a.expiry; },
    };
  }

  private async execute(a: Active) {
    const r = a.row;
    const ids = { step_id: r.step_id, run_id: r.run_id, node: r.node, attempt: r.attempt };
    this.beat(a, true);
    // The engine judges the timeout on its own clock (renew and complete refuse
    // past it); this local timer only stops a handler that overran sooner.
    if (r.timeout_s != null && r.timeout_s * 1000 < MAX_TIMER_MS) {
      a.timeout = setTimeout(() => this.lose(a, 'step timeout passed'), r.timeout_s * 1000);
    }
    let result: { ok: true; value: unknown } | { ok: false; err: unknown };
    try {
      const handler = Object.hasOwn(this.opts.handlers, r.handler) ? this.opts.handlers[r.handler] : undefined;
      if (!handler) throw new Error(`this worker has no handler "${r.handler}"`);
      result = { ok: true, value: await handler(this.context(a)) };
    } catch (err) { result = { ok: false, err }; }
    a.settled = true;
    clearTimeout(a.heartbeat); clearTimeout(a.timeout);
    if (a.lost) return this.log('warn', 'lease lost: result dropped', ids);
    if (this.closed) return this.log('warn', 'worker closed: result dropped, the lease will expire', ids);
    if (a.abandoned && !result.ok) return void (await this.release(r));
    let json: string | null = null;
    if (result.ok) {
      try { json = result.value === undefined ? null : (JSON.stringify(result.value) ?? null); }
      catch (err) { result = { ok: false, err: new Error(`the handler's output is not JSON: ${String(err)}`) }; }
    }
    if (result.ok) {
      try {
        const row = await this.report('SELECT cyclone.complete($1, $2, $3, $4::jsonb) AS ok', [r.step_id, this.name, r.lease_generation, json]);
        return this.log(row.ok ? 'info' : 'warn', row.ok ? 'step completed' : 'complete refused: the lease is no longer ours', ids);
      } catch (err) {
        if (isTransient(err)) return this.log('warn', 'result not reported: the lease will decide', { ...ids, error: String(err) });
        // complete refused the output itself (over 1 MiB, deeper than 100 levels, \u0000...): fail the attempt.
        result = { ok: false, err: new Error(`the engine refused the output: ${(err as Error).message}`) };
      }
    }
    if (result.err instanceof Snooze && Number.isFinite(result.err.seconds) && result.err.seconds >= 0
        && result.err.seconds <= 365 * 86400) {
      try {
        const row = await this.report('SELECT cyclone.snooze($1, $2, $3, make_interval(secs => $4)) AS ok',
          [r.step_id, this.name, r.lease_generation, result.err.seconds]);
        return this.log(row.ok ? 'info' : 'warn', row.ok ? 'step snoozed' : 'snooze refused: the lease is no longer ours',
          { ...ids, seconds: result.err.seconds });
      } catch (err) {
        return this.log('warn', 'snooze not reported: the lease will decide', { ...ids, error: String(err) });
      }
    }
    const kind = result.err instanceof Permanent ? 'permanent' : 'error';
    try {
      const row = await this.report('SELECT cyclone.fail($1, $2, $3, $4, $5) AS state',
        [r.step_id, this.name, r.lease_generation, errorText(result.err), kind]);
      if (row.state === null) this.log('warn', 'fail refused: the lease is no longer ours', ids);
      else this.log('info', row.state === 'discarded' ? 'step discarded' : 'step failed, will retry', { ...ids, kind });
    } catch (err) {
      this.log('warn', 'failure not reported: the lease will decide', { ...ids, error: String(err) });
    }
  }

  /** A report survives a short outage: retried for up to one lease TTL, then left to the lease. */
  private async report(sql: string, params: unknown[]): Promise<Record<string, unknown>> {
    const deadline = Date.now() + this.opts.leaseTtlSeconds * 1000;
    for (let delay = 200; ; delay = Math.min(delay * 2, 5000)) {
      try { return (await this.pool.query(sql, params)).rows[0]; }
      catch (err) {
        if (!isTransient(err) || this.closed || Date.now() + delay > deadline) throw err;
        await sleep(delay);
      }
    }
  }

  private async release(r: ClaimRow) {
    try {
      const { rows } = await this.pool.query('SELECT cyclone.release($1, $2, $3) AS ok', [r.step_id, this.name, r.lease_generation]);
      this.log('info', rows[0].ok ? 'lease released' : 'release refused', { step_id: r.step_id, run_id: r.run_id });
    } catch (err) { this.log('warn', 'release failed: the lease will expire', { step_id: r.step_id, error: String(err) }); }
  }

  /** The heartbeat: renew every TTL/3 (+-10%, first at a random phase); false = the lease is lost. */
  private beat(a: Active, first = false, soon = false) {
    const every = (this.opts.leaseTtlSeconds * 1000) / 3;
    const delay = first ? every * Math.random() : soon ? every / 4 : every * (0.9 + 0.2 * Math.random());
    a.heartbeat = setTimeout(async () => {
      const sent = Date.now();
      try {
        const { rows } = await this.pool.query('SELECT cyclone.renew($1, $2, $3, $4::interval) AS ok',
          [a.row.step_id, this.name, a.row.lease_generation, `${this.opts.leaseTtlSeconds} seconds`]);
        if (a.settled) return;
        if (!rows[0].ok) return this.lose(a, 'lease lost (renew refused)');
        // renew answers only true/false; the new expiry is the engine's now + TTL,
        // i.e. the claim's expiry moved by the time elapsed since the claim.
        a.expiry = new Date(a.row.lease_expiry.getTime() + (sent - a.claimedAt));
        this.beat(a);
      } catch (err) {
        this.log('debug', 'renew failed', { step_id: a.row.step_id, error: String(err) });
        if (!a.settled) this.beat(a, false, true);
      }
    }, delay);
  }

  private lose(a: Active, why: string) {
    if (a.settled || a.lost) return;
    a.lost = true;
    clearTimeout(a.heartbeat);
    this.log('warn', `${why}: aborting the handler`, { step_id: a.row.step_id, run_id: a.row.run_id });
    a.ctrl.abort(new Error(why));
  }

  // ---- notifications: hints only, anyone can NOTIFY anything

  private async listen() {
    for (let delay = 500; !this.stopping; delay = Math.min(delay * 2, 10_000)) {
      const client = new Client(pgConfig(this.opts.dsn));
      const ended = new Promise<void>((resolve) => { client.on('error', () => resolve()); client.on('end', () => resolve()); });
      try {
        await client.connect();
        client.on('notification', (n) => this.notified(n.channel, n.payload));
        await client.query('LISTEN cyclone_wakeup; LISTEN cyclone_cancel');
        this.trouble('listener');
        delay = 500;
        this.kick(); // wake-ups sent while we were not listening are lost: claim now
        await Promise.race([ended, this.stopped]);
        if (!this.stopping) throw new Error('listener connection lost');
      } catch (err) { this.trouble('listener', err); }
      await client.end().catch(() => {});
      if (!this.stopping) await sleep(delay, this.stopped);
    }
  }

  private notified(channel: string, payload: string | undefined) {
    if (channel === 'cyclone_wakeup') return this.kick(); // the loop folds a burst into one claim
    if (channel !== 'cyclone_cancel' || !payload || !UUID.test(payload)) return;
    const runId = payload.toLowerCase();
    for (const a of this.active) if (a.row.run_id === runId && !a.settled && !a.lost) this.cancelQueue.add(a);
    if (this.cancelQueue.size && !this.cancelFlush) this.cancelFlush = setTimeout(() => void this.checkLeases(), 10);
  }

  /** Ask the engine (one renew_many a burst) whether the leases still hold; abort only those it refuses. */
  private async checkLeases() {
    this.cancelFlush = undefined;
    const batch = [...this.cancelQueue].filter((a) => !a.settled && !a.lost);
    this.cancelQueue.clear();
    if (!batch.length || this.closed) return;
    try {
      const { rows } = await this.pool.query('SELECT step_id::text AS step_id, renewed FROM cyclone.renew_many($1, $2::bigint[], $3::bigint[], $4::interval)',
        [this.name, batch.map((a) => a.row.step_id), batch.map((a) => a.row.lease_generation), `${this.opts.leaseTtlSeconds} seconds`]);
      for (const row of rows) {
        const a = batch.find((x) => x.row.step_id === row.step_id);
        if (!a) continue;
        if (row.renewed === false) this.lose(a, 'lease lost (cancelled run)');
        else if (row.renewed === null) this.cancelQueue.add(a); // row busy elsewhere: ask again shortly
      }
    } catch (err) {
      this.log('debug', 'lease check failed; the heartbeat will tell', { error: String(err) });
    }
    if (this.cancelQueue.size && !this.cancelFlush) this.cancelFlush = setTimeout(() => void this.checkLeases(), 200);
  }

  // ---- shutdown: no more claims, a grace period, then abort, release, deregister

  private async drain() {
    const running = () => Promise.allSettled([...this.active].map((a) => a.done));
    if (this.active.size) {
      this.log('info', 'waiting for handlers', { running: this.active.size, grace_s: this.opts.shutdownGraceSeconds });
      await sleep(this.opts.shutdownGraceSeconds * 1000, running());
    }
    for (const a of this.active) {
      if (!a.settled && !a.lost) { a.abandoned = true; a.ctrl.abort(new Error('worker shutting down')); }
    }
    // Aborted handlers release their leases as they end. One that ignores its
    // signal keeps the lease until it expires: nobody else may run it meanwhile.
    if (this.active.size) await sleep(2000, running());
    for (const a of this.active) {
      clearTimeout(a.heartbeat);
      this.log('warn', 'handler ignored its abort: its lease will expire', { step_id: a.row.step_id });
    }
    clearTimeout(this.cancelFlush);
    await this.registry.deregister();
    this.closed = true;
    await this.pool.end().catch(() => {});
    this.log('info', 'worker stopped', { worker: this.name });
  }
}
