import { describe, expect, it } from 'vitest';
import type { KubeApi, RequestOptions } from '../../runtime/kube/client.js';
import { ManualClock } from '../../runtime/queue/clock.js';
import { EventRecorder, MAX_QUEUED_EVENTS, type EventInput } from './events.js';

/** A client whose every request waits until the test answers it; what was sent, in order. */
function heldClient() {
  const sent: { method: string; path: string; body: Record<string, unknown>; answer: (ok: boolean) => void }[] = [];
  const client = {
    request: (method: string, path: string, opts: RequestOptions = {}) =>
      new Promise((resolve, reject) =>
        sent.push({
          method,
          path,
          body: opts.body as Record<string, unknown>,
          answer: (ok) => (ok ? resolve({}) : reject(new Error('apiserver unreachable'))),
        }),
      ),
  } as unknown as KubeApi;
  /** Answers every request sent so far, then lets the recorder send its next one. */
  const answerAll = async (ok = true): Promise<void> => {
    for (let i = 0; i < 5000 && sent.some((s) => s.answer !== done); i++) {
      for (const s of sent)
        if (s.answer !== done) {
          const a = s.answer;
          s.answer = done;
          a(ok);
        }
      await new Promise((r) => setImmediate(r));
    }
  };
  return { client, sent, answerAll };
}
const done = (): void => undefined;

const event = (name: string, reason: EventInput['reason'] = 'RotationStarted'): EventInput => ({
  target: { kind: 'NodePool', name },
  type: 'Normal',
  reason,
  note: `about ${name}`,
});

function recorder() {
  const h = heldClient();
  const clock = new ManualClock(Date.parse('2027-01-05T18:00:00Z'));
  const logged: string[] = [];
  const r = new EventRecorder(h.client, 'ctl-0', clock, (m) => logged.push(m));
  return { ...h, clock, logged, r };
}

describe('EventRecorder: asynchronous, in order, one at a time', () => {
  it('emit returns at once; events go out in the order emitted, each once the one before was answered', async () => {
    const { r, sent, answerAll } = recorder();
    r.emit(event('a'));
    r.emit(event('b'));
    r.emit(event('c'));
    expect(sent.map((s) => s.path)).toHaveLength(1); // one in flight
    await answerAll();
    await r.idle();
    expect(sent.map((s) => (s.body.regarding as { name: string }).name)).toEqual(['a', 'b', 'c']);
    expect(sent.every((s) => s.method === 'POST' && s.path.endsWith('/namespaces/default/events'))).toBe(true);
  });

  it('a transition is written in the pass: record() resolves once it is written, warnings queued or not', async () => {
    const { r, sent, answerAll } = recorder();
    r.emit(event('queued', 'ShortLead'));
    let written = false;
    const p = r.record(event('started')).then(() => (written = true));
    expect(sent.map((s) => (s.body.regarding as { name: string }).name)).toEqual(['queued', 'started']);
    await new Promise((res) => setImmediate(res));
    expect(written).toBe(false); // its request is not answered yet
    await answerAll();
    await p;
    expect(written).toBe(true);
  });

  it('an event carries the time it was emitted, not the time it was sent', async () => {
    const { r, sent, clock, answerAll } = recorder();
    const at = clock.now();
    r.emit(event('a'));
    r.emit(event('b'));
    clock.advance(30_000);
    await answerAll();
    expect(sent.map((s) => s.body.eventTime)).toEqual([
      new Date(at).toISOString().replace('Z', '000Z'),
      new Date(at).toISOString().replace('Z', '000Z'),
    ]);
  });

  it.each([
    { reason: 'a repeat within six minutes is counted on the first event', gapMs: 60_000, second: 'PATCH' },
    { reason: 'a repeat after six minutes is a new event', gapMs: 7 * 60_000, second: 'POST' },
  ])('$reason', async ({ gapMs, second }) => {
    const { r, sent, clock, answerAll } = recorder();
    r.emit(event('a'));
    await answerAll();
    clock.advance(gapMs);
    r.emit(event('a'));
    await answerAll();
    expect(sent.map((s) => s.method)).toEqual(['POST', second]);
    if (second === 'PATCH') expect(sent[1]?.body).toMatchObject({ series: { count: 2 } });
  });

  it('a failed send is logged and the next event still goes', async () => {
    const { r, sent, logged, answerAll } = recorder();
    r.emit(event('a'));
    r.emit(event('b'));
    await answerAll(false);
    await r.idle();
    expect(sent).toHaveLength(2);
    expect(logged).toEqual(['could not record an event', 'could not record an event']);
  });

  it(`past ${MAX_QUEUED_EVENTS} unsent events, a new one is dropped and logged`, async () => {
    const { r, sent, logged, answerAll } = recorder();
    for (let i = 0; i <= MAX_QUEUED_EVENTS + 1; i++) r.emit(event(`p${i}`));
    // One in flight, MAX_QUEUED_EVENTS waiting: the last is dropped.
    expect(logged).toEqual(['event queue full; event dropped']);
    await answerAll();
    await r.idle();
    expect(sent).toHaveLength(MAX_QUEUED_EVENTS + 1);
  });

  it('level-triggered warnings: emitted when they start, not while they last, again after they clear', async () => {
    const { r, sent, answerAll } = recorder();
    const w = event('a', 'ShortLead');
    r.level('general', [w]);
    r.level('general', [w]);
    r.level('general', []);
    r.level('general', [w]);
    await answerAll();
    await r.idle();
    expect(sent.map((s) => s.method)).toEqual(['POST', 'PATCH']);
  });
});
