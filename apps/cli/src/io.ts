import type { CliIo } from './simulate-command.js';

/** `qm`'s I/O: the simulator's, plus stdin for `-f -` and `--token -`, and the signals that stop a watch. */
export interface QmIo extends CliIo {
  stdin?: AsyncIterable<Buffer | string> & { isTTY?: boolean };
  /**
   * For `--watch`: starts listening for Ctrl-C and SIGTERM and returns a signal aborted by the first of
   * them (a second one then ends the process as usual). Without it, a watch runs until it fails.
   */
  interrupts?: () => AbortSignal;
}
