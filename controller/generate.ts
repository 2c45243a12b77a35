// `npm run generate` (controller part): deploy/controller/rbac.yaml from controller/rbac.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rbacYaml } from './rbac.js';

export const RBAC_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy/controller/rbac.yaml');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(path.dirname(RBAC_FILE), { recursive: true });
  writeFileSync(RBAC_FILE, rbacYaml());
  console.log(`wrote ${path.relative(process.cwd(), RBAC_FILE)}`);
}
