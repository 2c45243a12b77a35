import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_PRIORITY_CLASS } from './placeholder.js';

describe('the shipped placeholder PriorityClass', () => {
  it('is the default the engine names, negative, and never preempts', () => {
    const pc = parse(
      readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'placeholder-priorityclass.yaml'), 'utf8'),
    ) as { value?: unknown };
    expect(pc).toMatchObject({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: DEFAULT_PRIORITY_CLASS },
      preemptionPolicy: 'Never',
      globalDefault: false,
    });
    expect(pc.value).toBeLessThan(0);
  });
});
