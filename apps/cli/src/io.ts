import type { CliIo } from './simulate-command.js';

/** `qm`'s I/O: the simulator's, plus stdin for `-f -` and `--token -`. */
export interface QmIo extends CliIo {
  stdin?: AsyncIterable<Buffer | string> & { isTTY?: boolean };
}
