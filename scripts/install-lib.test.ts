import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './generate-io.js';
import { installFiles } from './install-lib.js';

// The real tools check the installation in test/install/ (`npm run test:install`); this keeps the derived files
// in step with their sources in `npm test`, where a change to controller/rbac.ts or the CRDs is made.
describe('generated installation files', () => {
  it.each([...installFiles(ROOT)])('%s is up to date (run `npm run generate`)', (file, content) => {
    expect(readFileSync(join(ROOT, file), 'utf8')).toBe(content);
  });

  it('the chart RBAC follows controller/rbac.ts: a changed verb changes it', () => {
    const rbac = installFiles(ROOT).get('charts/noderotation/templates/rbac.yaml') as string;
    expect(rbac).toContain('rotationpolicies/status');
    expect(rbac).toContain('{{ .Release.Namespace }}');
    expect(rbac).not.toContain('__');
  });
});
