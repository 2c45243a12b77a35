import { describe, expect, it } from 'vitest';
import { pluginArgs } from './kubectl-plugin.js';

describe('kubectl noderotation', () => {
  it.each([
    {
      reason: 'status always reads the cluster',
      argv: ['status', '-o', 'wide'],
      want: ['status', '--from-cluster', '-o', 'wide'],
    },
    {
      reason: 'status with -f still reads the cluster under the files',
      argv: ['status', '-f', 'a.yaml'],
      want: ['status', '--from-cluster', '-f', 'a.yaml'],
    },
    {
      reason: 'explain without files reads the cluster',
      argv: ['explain', '--context', 'prod'],
      want: ['explain', '--from-cluster', '--context', 'prod'],
    },
    {
      reason: 'validate with files stays offline (CI)',
      argv: ['validate', '-f', 'plans/'],
      want: ['validate', '-f', 'plans/'],
    },
    {
      reason: '--filename= counts as files',
      argv: ['render', '--filename=p.yaml'],
      want: ['render', '--filename=p.yaml'],
    },
    {
      reason: 'an explicit --from-cluster is not doubled',
      argv: ['explain', '-f', 'x', '--from-cluster'],
      want: ['explain', '-f', 'x', '--from-cluster'],
    },
    { reason: 'other commands pass through', argv: ['simulate', '-f', 's.yaml'], want: ['simulate', '-f', 's.yaml'] },
    { reason: 'no command: the usage', argv: [], want: [] },
  ])('$reason', ({ argv, want }) => {
    expect(pluginArgs(argv)).toEqual(want);
  });
});
