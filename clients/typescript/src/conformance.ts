// The conformance kit's worker app (docs/conformance.md), the TypeScript twin of
// cyclone_py/conformance_app.py:
//
//   npm run build && cyclone conformance -- node clients/typescript/dist/conformance.js
//
// It serves the kit's six handlers with the settings the kit requires (a lease
// TTL of at most 3 s, a poll of at most 1 s, a shutdown grace of at most 2 s,
// max_reclaims 0, a concurrency of 1 to 4). The kit defines the workflows; the
// handlers use only their input, attempt and cancellation signal.
import { setTimeout as wait } from 'node:timers/promises';
import { Permanent, Snooze, Worker, type StepContext } from './worker.js';

const dsn = process.env.CYCLONE_DSN; // postgresql://user@/db?host=/socket/dir&port=5432
if (!dsn) {
  process.stderr.write('conformance: set CYCLONE_DSN to the database under test\n');
  process.exit(2);
}

const HANG_SECONDS = 60; // the longest a `hang` handler waits to be cancelled

// Resolves after `seconds`, or rejects as soon as the step's signal aborts (lease
// lost, run cancelled, timeout, shutdown): the worker then reports nothing, or
// releases the lease on shutdown.
const pause = (seconds: number, ctx: StepContext) => wait(seconds * 1000, undefined, { signal: ctx.signal });

// The run input, a JSON object for every run the engine accepted.
const input = (ctx: StepContext) => (ctx.input ?? {}) as Record<string, unknown>;

const worker = new Worker({
  dsn,
  workflows: ['conformance_echo', 'conformance_flaky', 'conformance_permanent', 'conformance_sleep',
    'conformance_timeout', 'conformance_hang', 'conformance_signal', 'conformance_map', 'conformance_snooze'],
  concurrency: 2, // registered as info.concurrency: the kit fills that many handlers
  leaseTtlSeconds: 2,
  pollIntervalSeconds: 0.2,
  shutdownGraceSeconds: 1,
  maxReclaims: 0,
  handlers: {
    echo: (ctx) => ({ input: ctx.input, deps: ctx.deps, attempt: ctx.attempt, item: ctx.item ?? null,
      item_index: ctx.itemIndex ?? null }),
    // Snoozes until the input's `until` (an ISO 8601 time on this machine's clock), then completes.
    snooze: (ctx) => {
      const left = (Date.parse(String(input(ctx).until)) - Date.now()) / 1000;
      if (left > 0) throw new Snooze(left);
      return { attempt: ctx.attempt };
    },
    flaky: (ctx) => {
      if (ctx.attempt <= Number(input(ctx).fail_times ?? 0)) throw new Error(`flaky: attempt ${ctx.attempt} fails by design`);
      return { attempt: ctx.attempt };
    },
    permanent: () => { throw new Permanent('permanent by design'); },
    sleep: async (ctx) => {
      const { seconds = 0, slow_attempts: slow } = input(ctx);
      if (slow == null || ctx.attempt <= Number(slow)) await pause(Number(seconds), ctx);
      return { attempt: ctx.attempt };
    },
    hang: async (ctx) => {
      await pause(HANG_SECONDS, ctx);
      return { ignored: true };
    },
  },
});

// run() resolves after a clean shutdown (SIGTERM, SIGINT): leases released, registry row removed.
worker.run().then(() => process.exit(0), (err) => {
  process.stderr.write(`conformance: ${String(err)}\n`);
  process.exit(1);
});
