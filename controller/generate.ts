// `npm run generate` (controller part): deploy/controller/rbac.yaml from controller/rbac.ts and
// deploy/controller/admission.yaml from controller/admission.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { admissionYaml } from './admission.js';
import { rbacYaml } from './rbac.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const RBAC_FILE = path.resolve(here, '../deploy/controller/rbac.yaml');
export const ADMISSION_FILE = path.resolve(here, '../deploy/controller/admission.yaml');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(path.dirname(RBAC_FILE), { recursive: true });
  for (const [file, text] of [
    [RBAC_FILE, rbacYaml()],
    [ADMISSION_FILE, admissionYaml()],
  ] as const) {
    writeFileSync(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
