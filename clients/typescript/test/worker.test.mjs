// node --test test/  (after npm run build). The end-to-end test needs CYCLONE_TEST_DSN:
// a scratch database with Cyclone deployed, as a role that may move the engine clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Permanent, Worker, isTransient, pgConfig } from '../dist/index.js';

test('pgConfig reads URLs and libpq keywords', () => {
  assert.equal(pgConfig('postgresql://u@h/db').connectionString, 'postgresql://u@h/db');
  const c = pgConfig("host=/tmp/sock port=5433 user=me dbname=app password='it\\'s a \\\\ x'");
  assert.deepEqual([c.host, c.port, c.user, c.database, c.password], ['/tmp/sock', 5433, 'me', 'app', "it's a \\ x"]);
});

test('isTransient: connection trouble yes, bad data no', () => {
  assert.ok(isTransient(new Error('Connection terminated unexpectedly')));
  assert.ok(isTransient(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })));
  assert.ok(isTransient(Object.assign(new Error('x'), { code: '57P01' })));
  assert.ok(!isTransient(Object.assign(new Error('x'), { code: '22023' })));
});

test('Worker refuses a poll interval longer than the lease', () => {
  assert.throws(() => new Worker({ dsn: 'postgresql://x/y', handlers: { a: () => 1 }, leaseTtlSeconds: 5, pollIntervalSeconds: 6 }), RangeError);
});

const dsn = process.env.CYCLONE_TEST_DSN;
test('end to end against a database', { skip: !dsn && 'CYCLONE_TEST_DSN not set', timeout: 60_000 }, async () => {
  const db = new pg.Client(pgConfig(dsn));
  await db.connect();
  const q = async (sql, ...args) => (await db.query(sql, args)).rows;
  const wf = `ts_e2e_${process.pid}`;
  const until = async (what, check) => {
    for (let i = 0; i < 200; i++) { const v = await check(); if (v) return v; await new Promise((r) => setTimeout(r, 100)); }
    throw new Error(`timed out waiting for ${what}`);
  };
  const runState = (id) => q('SELECT state, error_kind, output FROM cyclone.get_run($1)', id).then((r) => r[0]);
  const step = (id) => q('SELECT state, attempt, reclaims FROM cyclone.cyclone_steps WHERE run_id = $1', id).then((r) => r[0]);
  const seen = {};
  const handlers = {
    [`${wf}_h`]: async (ctx) => {
      const mode = ctx.input.mode;
      seen[mode] = ctx;
      if (mode === 'flaky' && ctx.attempt === 1) throw new Error('first attempt fails');
      if (mode === 'permanent') throw new Permanent('no');
      if (mode === 'long') await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      return { mode, attempt: ctx.attempt };
    },
  };
  await q(`SELECT cyclone.define_workflow($1, $2::jsonb)`, wf, JSON.stringify({ max_attempts: 3, nodes: [{ name: 'n', handler: `${wf}_h` }] }));
  const submit = async (mode) => (await q('SELECT cyclone.submit($1, $2::jsonb) AS id', wf, JSON.stringify({ mode })))[0].id;
  const worker = new Worker({ dsn, handlers, workflows: [wf], leaseTtlSeconds: 3, pollIntervalSeconds: 0.5,
    shutdownGraceSeconds: 0.5, handleSignals: false, log: () => {} });
  const running = worker.run();
  try {
    const ok = await submit('ok'), flaky = await submit('flaky'), perm = await submit('permanent');
    assert.deepEqual((await until('ok', async () => (await runState(ok)).state === 'completed' && runState(ok))).output, { n: { mode: 'ok', attempt: 1 } });
    await until('flaky retried', async () => (await runState(flaky)).state === 'completed');
    assert.equal((await step(flaky)).attempt, 2);
    await until('permanent', async () => (await runState(perm)).error_kind === 'permanent');

    // A forged cancel is checked with the engine and ignored; a real one aborts the handler.
    const cancelled = await submit('long');
    await until('long running', async () => seen.long?.runId === cancelled);
    await q(`SELECT pg_notify('cyclone_cancel', $1)`, cancelled);
    await q(`SELECT pg_notify('cyclone_cancel', 'not a uuid')`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(seen.long.signal.aborted, false);
    await q('SELECT cyclone.cancel($1)', cancelled);
    await until('abort', async () => seen.long.signal.aborted);

    // A handler still running at shutdown is aborted and its lease released: available, same attempt.
    const released = await submit('long');
    await until('second long running', async () => seen.long.runId === released);
    worker.stop();
    await running;
    assert.deepEqual(await step(released), { state: 'available', attempt: 1, reclaims: 0 });
    await q('SELECT cyclone.cancel($1)', released);
  } finally {
    worker.stop();
    await running;
    await db.end();
  }
});
