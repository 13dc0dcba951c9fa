import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepVerifier } from '../sweep.ts';

// Placeholder until the solana reader of transaction bytes lands (issue 45): refuses everything.

export const solanaSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned: () => {
    throw new UsageError('solana transactions cannot be read yet');
  },
  decodeSigned: () => {
    throw new UsageError('solana transactions cannot be read yet');
  },
};
