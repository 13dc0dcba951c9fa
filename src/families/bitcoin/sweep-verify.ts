import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepVerifier } from '../sweep.ts';

// Placeholder until the bitcoin reader of transaction bytes lands (issue 45): refuses everything.

export const bitcoinSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned: () => {
    throw new UsageError('bitcoin transactions cannot be read yet');
  },
  decodeSigned: () => {
    throw new UsageError('bitcoin transactions cannot be read yet');
  },
};
