import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepVerifier } from '../sweep.ts';

// Placeholder until the evm reader of transaction bytes lands (issue 45): refuses everything.

export const evmSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned: () => {
    throw new UsageError('evm transactions cannot be read yet');
  },
  decodeSigned: () => {
    throw new UsageError('evm transactions cannot be read yet');
  },
};
