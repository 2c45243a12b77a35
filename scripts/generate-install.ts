// `npm run generate` (installation part, after the CRDs and the RBAC are generated): the files
// scripts/install-lib.ts derives for the kustomize base and the Helm chart.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './generate-io.js';
import { installFiles } from './install-lib.js';

for (const [path, content] of installFiles(ROOT)) {
  mkdirSync(dirname(join(ROOT, path)), { recursive: true });
  writeFileSync(join(ROOT, path), content);
  console.log(`wrote ${path}`);
}
