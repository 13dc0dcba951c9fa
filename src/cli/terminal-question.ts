import { createInterface } from 'node:readline/promises';

/** Asks a yes/no question on the terminal (stderr, so stdout stays clean); only "y" or "yes" is yes. */
export async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}
