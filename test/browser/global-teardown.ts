import { rmSync } from 'node:fs';

export default function globalTeardown(): void {
  const dir = process.env.QM_TEST_CONSOLE_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
