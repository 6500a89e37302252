// A runnable worker: `npm run build && CYCLONE_DSN=postgresql://... node dist/example.js`
// Serves the handlers of the workflow "ts_demo" (defined in README.md).
import { Permanent, Worker, type StepContext } from './index.js';

const dsn = process.env.CYCLONE_DSN;
if (!dsn) {
  process.stderr.write('example: set CYCLONE_DSN\n');
  process.exit(2);
}

// Resolves after ms, or rejects as soon as the step's lease is lost or the worker stops.
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });
}

const worker = new Worker({
  dsn,
  workflows: ['ts_demo'],
  concurrency: Number(process.env.CYCLONE_CONCURRENCY ?? 4),
  leaseTtlSeconds: Number(process.env.CYCLONE_LEASE_TTL ?? 30),
  pollIntervalSeconds: Number(process.env.CYCLONE_POLL_INTERVAL ?? 1),
  maxReclaims: Number(process.env.CYCLONE_MAX_RECLAIMS ?? 3),
  shutdownGraceSeconds: Number(process.env.CYCLONE_SHUTDOWN_GRACE ?? 10),
  handlers: {
    // {"name": "Ada"} -> {"greeting": "hello Ada"}
    greet: async (ctx: StepContext) => {
      const { name } = (ctx.input ?? {}) as { name?: unknown };
      if (typeof name !== 'string') throw new Permanent('input.name must be a string');
      return { greeting: `hello ${name}` };
    },
    // Works for input.sleep_ms, then fails its first input.fail_times attempts.
    work: async (ctx: StepContext) => {
      const { sleep_ms = 0, fail_times = 0 } = (ctx.input ?? {}) as { sleep_ms?: number; fail_times?: number };
      await pause(sleep_ms, ctx.signal);
      if (ctx.attempt <= fail_times) throw new Error(`failing on purpose (attempt ${ctx.attempt} of ${ctx.maxAttempts})`);
      return { greeting: (ctx.deps.greet as { greeting?: string } | undefined)?.greeting, attempt: ctx.attempt };
    },
  },
});

worker.run().then(() => process.exit(0), (err) => {
  process.stderr.write(`example: ${String(err)}\n`);
  process.exit(1);
});
